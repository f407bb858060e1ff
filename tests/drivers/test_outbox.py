"""The outbox: events in order and bounded, the status in a last-value slot no overflow drops."""

from __future__ import annotations

from link.outbox import Outbox, Outgoing


def drain(outbox: Outbox) -> list[str]:
    sent = []
    while (item := outbox.peek()) is not None:
        sent.append(item.payload.decode())
        outbox.done(item)
    return sent


def event(name: str) -> Outgoing:
    return Outgoing("t/event", name.encode())


def status(name: str) -> Outgoing:
    return Outgoing("t/status", name.encode(), retain=True)


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
    dropped: list[Outgoing] = []
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
