"""Flights (``controller.service.flights``): the outputs handed to the broker land in order, a
new flight takes off while earlier ones await their PUBACKs but never past one still boarding
or past the limit, and what a lost connection cut short goes back in order."""

from __future__ import annotations

import asyncio
from collections import deque

import pytest

from controller.journal.records import PublishedWhat
from controller.service.flights import Flight, Flights
from controller.service.outgoing import Outgoing


def _out(name: str) -> Outgoing:
    return Outgoing("alert", 1, f"t/{name}", name.encode(), retain=False)


def _handed(loop: asyncio.AbstractEventLoop, *names: str, pending: tuple[str, ...] = ()) -> Flight:
    flight = Flight([_out(n) for n in pending], status_after=0)
    flight.batch = [_out(n) for n in names]
    flight.publishes = [loop.create_future() for _ in names]
    return flight


def test_a_flight_takes_off_while_another_awaits_its_pubacks_and_they_land_in_order() -> None:
    async def run() -> list[str]:
        loop = asyncio.get_running_loop()
        flights = Flights(limit=10)
        landed: list[str] = []
        first = _handed(loop, "state")
        flights.add(first)
        assert flights.may_take_off()  # the alert need not wait for the state's PUBACK
        second = _handed(loop, "alert")
        flights.add(second)
        lander = asyncio.create_task(flights.land(lambda f: None, lambda out: landed.append(out.topic)))
        second.publishes[0].set_result(None)  # its PUBACK first: still journaled second
        await asyncio.sleep(0.01)
        assert landed == []
        first.publishes[0].set_result(None)
        await asyncio.wait_for(flights.empty(), 1)
        lander.cancel()
        return landed

    assert asyncio.run(run()) == ["t/state", "t/alert"]


def test_no_take_off_while_a_flight_is_boarding_or_past_the_limit() -> None:
    async def run() -> None:
        loop = asyncio.get_running_loop()
        flights = Flights(limit=3)
        boarding = _handed(loop, "a", pending=("b",))
        flights.add(boarding)
        assert not flights.may_take_off()  # "b" must leave before anything newer

        def hand(flight: Flight) -> None:
            flight.batch, flight.pending = flight.pending, []
            flight.publishes = [loop.create_future() for _ in flight.batch]

        lander = asyncio.create_task(flights.land(hand, lambda out: None))
        boarding.publishes[0].set_result(None)
        await asyncio.wait_for(flights.room(), 1)  # "b" handed: boarded
        assert [o.topic for o in boarding.batch] == ["t/b"]
        flights.add(_handed(loop, "c", "d"))
        assert not flights.may_take_off()  # three publishes await their PUBACKs: the limit
        lander.cancel()

    asyncio.run(run())


def test_a_failed_publish_leaves_what_is_not_acknowledged_in_order() -> None:
    async def run() -> tuple[list[str], list[str], bool]:
        loop = asyncio.get_running_loop()
        flights = Flights(limit=10)
        landed: list[str] = []
        first = _handed(loop, "a", "b", pending=("c",))
        first.announced = None
        second = _handed(loop, "d")
        flights.add(first)
        flights.add(second)
        first.publishes[0].set_result(None)
        first.publishes[1].set_exception(ConnectionError("lost"))
        with pytest.raises(ConnectionError):
            await flights.land(lambda f: None, lambda out: landed.append(out.topic))
        items, announced = flights.abandon()
        assert second.publishes[0].cancelled()
        return landed, [o.topic for o in items], announced

    landed, left, announced = asyncio.run(run())
    assert landed == ["t/a"]
    assert left == ["t/b", "t/c", "t/d"]
    assert not announced


def test_landed_flights_make_room_again_and_those_landed_already_land_in_one_go() -> None:
    async def run() -> list[str]:
        loop = asyncio.get_running_loop()
        flights = Flights(limit=2)
        landed: list[str] = []
        first, second = _handed(loop, "a"), _handed(loop, "b")
        flights.add(first)
        flights.add(second)
        assert not flights.may_take_off()  # two publishes await their PUBACKs: the limit
        # Both PUBACKs came in one read, the second one's first: both land, in order.
        second.publishes[0].set_result(None)
        first.publishes[0].set_result(None)
        lander = asyncio.create_task(flights.land(lambda f: None, lambda out: landed.append(out.topic)))
        await asyncio.wait_for(flights.room(), 1)
        assert flights.may_take_off()
        flights.add(_handed(loop, "c"))
        assert flights.may_take_off()  # one awaited, under the limit
        lander.cancel()
        return landed

    assert asyncio.run(run()) == ["t/a", "t/b"]


def test_a_flight_takes_the_outbox_as_far_as_its_records_are_written_in_order() -> None:
    def out(cause: int, name: str, what: PublishedWhat = "alert") -> Outgoing:
        return Outgoing(what, cause, f"t/{name}", b"", retain=False)

    outbox = deque(
        [out(1, "a"), out(1, "s1", "state"), out(2, "b"), out(0, "s2", "state"), out(3, "c"), out(2, "d")]
    )
    flight = Flight.from_outbox(outbox, written=2)
    # As far as the first output of a later record; the state followed by a newer one left out.
    assert [o.topic for o in flight.pending] == ["t/a", "t/b", "t/s2"]
    assert flight.status_after == 3  # (a status goes after the newest state)
    assert [o.topic for o in outbox] == ["t/c", "t/d"]  # in order, for the next flight
    rest = Flight.from_outbox(outbox)
    assert [o.topic for o in rest.pending] == ["t/c", "t/d"]
    assert rest.status_after == 0
    assert not outbox
