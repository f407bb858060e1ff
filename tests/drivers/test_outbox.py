"""The outbox: events in order and bounded, the status in a last-value slot no overflow drops."""

from __future__ import annotations

from link.outbox import Outbox, OutboxMessage


def drain(outbox: Outbox) -> list[str]:
    sent = []
    while (item := outbox.peek()) is not None:
        sent.append(item.payload.decode())
        outbox.done(item)
    return sent


def event(name: str) -> OutboxMessage:
    return OutboxMessage("t/event", name.encode())


def status(name: str) -> OutboxMessage:
    return OutboxMessage("t/status", name.encode(), retain=True)


def test_the_status_goes_out_between_the_events_before_and_after_it() -> None:
    outbox = Outbox(10)
    outbox.put(event("e1"))
    outbox.set_status(status("online"))
    outbox.put(event("e2"))
    assert len(outbox) == 3
    assert drain(outbox) == ["e1", "online", "e2"]
    assert not outbox.ready.is_set()


def test_a_newer_status_replaces_the_waiting_one() -> None:
    outbox = Outbox(10)
    outbox.set_status(status("online"))
    outbox.put(event("e1"))
    outbox.set_status(status("fault"))
    outbox.put(event("e2"))
    assert drain(outbox) == ["e1", "fault", "e2"]


def test_an_overflow_drops_the_oldest_event_never_the_status() -> None:
    dropped: list[OutboxMessage] = []
    outbox = Outbox(3, on_drop=dropped.append)
    outbox.set_status(status("online"))
    for n in range(1, 6):
        outbox.put(event(f"e{n}"))
    assert [d.payload for d in dropped] == [b"e1", b"e2"]
    assert outbox.dropped == 2
    assert drain(outbox) == ["online", "e3", "e4", "e5"]


def test_a_message_leaves_only_once_the_broker_took_it() -> None:
    outbox = Outbox(10)
    outbox.put(event("e1"))
    first = outbox.peek()
    assert first is not None
    assert outbox.peek() is first  # not acknowledged: still first, sent again after a reconnect
    outbox.set_status(status("online"))
    in_flight = outbox.peek()
    assert in_flight is first
    outbox.done(first)
    sent_status = outbox.peek()
    assert sent_status is not None
    outbox.set_status(status("offline"))  # replaced while the old one was being published
    outbox.done(sent_status)
    assert drain(outbox) == ["offline"]


def test_a_status_said_again_after_a_reconnection_goes_before_what_waited() -> None:
    outbox = Outbox(10)
    outbox.put(event("e1"))
    outbox.put(event("e2"))
    outbox.set_status(status("online, seq 2"), first=True)
    outbox.put(event("e3"))
    assert drain(outbox) == ["online, seq 2", "e1", "e2", "e3"]


def drain_runs(outbox: Outbox, limit: int) -> list[list[str]]:
    """What a publisher that sends runs together sends, run by run."""
    runs = []
    while run := outbox.peek_run(limit):
        runs.append([item.payload.decode() for item in run])
        for item in run:
            outbox.done(item)
    return runs


def test_events_go_out_in_runs_that_never_pass_the_status() -> None:
    outbox = Outbox(10)
    for name in ("e1", "e2", "e3"):
        outbox.put(event(name))
    outbox.set_status(status("online"))
    for name in ("e4", "e5", "e6", "e7"):
        outbox.put(event(name))
    assert drain_runs(outbox, 2) == [["e1", "e2"], ["e3"], ["online"], ["e4", "e5"], ["e6", "e7"]]
    assert not outbox.ready.is_set()


def test_a_status_said_first_leaves_alone_before_the_runs() -> None:
    outbox = Outbox(10)
    outbox.put(event("e1"))
    outbox.put(event("e2"))
    outbox.set_status(status("online"), first=True)
    assert drain_runs(outbox, 16) == [["online"], ["e1", "e2"]]
