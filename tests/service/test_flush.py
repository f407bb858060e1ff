"""The publisher's flush (``Service._flush``): one wait for the journal's writer, for what is
queued when it looks; then the outbox as far as its records are written, in order, and the
status owed then after the state queued with it. What came meanwhile goes with the next flush.

The broker is not needed: paho's part (``Service._hand``) is replaced by a record of what it
was handed, and the journal's side (``Acknowledgements``) by a writer behind a receiver that
runs ahead of it, as through a backlog."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import aiomqtt
import pytest

from config.loader import load_table
from controller.journal.records import PublishedWhat
from controller.service.acks import Acknowledgements
from controller.service.flights import Flight
from controller.service.network import Service
from controller.service.outgoing import Outgoing
from tests.service.support import write_config


def _out(cause: int, what: PublishedWhat = "alert") -> Outgoing:
    return Outgoing(what, cause, f"t/{what}/{cause}", b"", retain=False)


class _RunningAhead:
    """A journal's writer behind a receiver running ahead of it, for the service's
    acknowledgements (:meth:`install`): each wait for a record ends as the receiver queues
    ``meanwhile(record)``, the writer having written exactly that record."""

    def __init__(self, meanwhile: Callable[[int], None]) -> None:
        self.meanwhile = meanwhile
        self.waits: list[int] = []

    def install(self, acks: Acknowledgements, monkeypatch: pytest.MonkeyPatch) -> _RunningAhead:
        monkeypatch.setattr(acks, "written", self.written)
        monkeypatch.setattr(acks, "publishable", self.publishable)
        return self

    async def written(self, record: int) -> None:
        self.waits.append(record)
        self.meanwhile(record)

    def publishable(self, waited: int) -> int | None:
        return waited


@dataclass
class _Handed:
    causes: list[int]
    status: str | None
    status_after: int


def _service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Service, list[_Handed]]:
    service = Service(*load_table(write_config(tmp_path, "mqtt://127.0.0.1:1")))
    handed: list[_Handed] = []

    def hand(client: aiomqtt.Client, flight: Flight) -> None:  # paho takes it all at once
        status = flight.status.state if flight.status is not None else None
        handed.append(_Handed([o.cause for o in flight.pending], status, flight.status_after))
        flight.batch, flight.pending, flight.status = flight.pending, [], None

    monkeypatch.setattr(service, "_hand", hand)
    return service, handed


def test_a_flush_waits_once_and_takes_the_outbox_as_far_as_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def run() -> tuple[list[int], list[_Handed], list[int], bool]:
        service, handed = _service(tmp_path, monkeypatch)
        # The receiver queues an output of the next record whenever the writer got to one
        # (ten times: the chase this replaces followed it all the way).
        ahead = _RunningAhead(lambda record: service.outbox.append(_out(record + 1)) if record < 10 else None)
        ahead.install(service.acks, monkeypatch)
        service.outbox.extend([_out(1), _out(1)])
        await service._flush(aiomqtt.Client("127.0.0.1"))
        return ahead.waits, handed, [o.cause for o in service.outbox], service._publish_wanted.is_set()

    waits, handed, left, woken = asyncio.run(run())
    assert waits == [1]
    assert [h.causes for h in handed] == [[1, 1]]
    assert left == [2]  # for the next flush, which the publisher is woken for
    assert woken


def test_a_status_owed_after_the_flush_looked_leaves_with_the_next_one_after_its_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def run() -> list[_Handed]:
        service, handed = _service(tmp_path, monkeypatch)
        client = aiomqtt.Client("127.0.0.1")

        def meanwhile(record: int) -> None:
            if record == 1:
                # The receiver queues an output of a record not yet written, then the connection
                # is subscribed (``_announce``): the state and the status owed at once.
                service.outbox.extend([_out(2), _out(0, "state")])
                service._status_due = service._may_announce = True

        _RunningAhead(meanwhile).install(service.acks, monkeypatch)
        service.outbox.append(_out(1))
        await service._flush(client)
        await service._flush(client)
        return handed

    first, second = asyncio.run(run())
    # Not ``online`` ahead of the state: the first flush took only what was written.
    assert (first.causes, first.status) == ([1], None)
    assert (second.causes, second.status, second.status_after) == ([2, 0], "online", 2)
