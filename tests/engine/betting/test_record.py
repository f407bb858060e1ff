"""The betting core's state (engine/betting/record.py) is plain frozen data: every value a played
hand leaves in it is an int, str, bool, None, tuple, frozenset, dict or frozen dataclass of those,
so it can be serialised field by field and nothing derived rides along."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import fields, is_dataclass

import pytest

from engine.betting.hand import Money
from engine.betting.record import HandState
from tests.engine.betting.test_hand_rules import BOARD, Table, start


def _plain(value: object, where: str) -> None:
    if value is None or isinstance(value, bool | int | str | float):
        return
    if isinstance(value, tuple | frozenset):
        for index, item in enumerate(value):
            _plain(item, f"{where}[{index}]")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            _plain(key, f"{where} key")
            _plain(item, f"{where}[{key!r}]")
        return
    assert is_dataclass(value), f"{where}: {type(value).__name__}"
    assert not isinstance(value, type), f"{where}: a class"
    params = getattr(type(value), "__dataclass_params__")  # noqa: B009 - the dataclass's own flags
    assert params.frozen, f"{where}: {type(value).__name__} is not frozen"
    names = {f.name for f in fields(value)}
    extra = set(getattr(value, "__dict__", {})) - names
    assert not extra, f"{where}: {type(value).__name__} keeps {extra} besides its fields"
    for name in names:
        _plain(getattr(value, name), f"{where}.{name}")


def _played() -> Money:
    """A hand with blinds, a raise, a call, a sweep, the streets, a showdown and the push."""
    t = Table(start((1, 2, 3), button=3))
    t.blinds()
    t.bet(3, 6)
    t.bet(1, 5)
    t.fold(2)
    for street in (1, 2, 3):
        t.sweep()
        t.street(street)
    # the queries the machine asks, which must leave nothing behind in the value
    _ = (t.m.to_act, t.m.bets, t.m.pots, t.m.shows_first, t.m.uncalled, t.m.run_out, t.m.settled)
    t.m, _ = t.m.table(1, ("As", "Ad"), BOARD)
    t.m, _ = t.m.table(3, ("4c", "5d"), BOARD)
    t.move(14, "pot", "bet:1")
    _ = (t.m.decided, t.m.settled, t.m.table_view(True))
    return t.m


def test_a_played_hand_leaves_only_plain_frozen_data() -> None:
    money = _played()
    assert money.settled
    _plain(money, "money")


def test_the_state_round_trips_through_its_fields() -> None:
    money = _played()
    # rebuilt from its fields alone (what a codec does), the value answers the same
    state = money.state
    rebuilt = Money(dataclasses.replace(state, **{f.name: getattr(state, f.name) for f in fields(HandState)}))
    assert rebuilt == money
    assert rebuilt.table_view(True) == money.table_view(True)
    assert rebuilt.finish(BOARD)[2] == money.finish(BOARD)[2]


def test_a_plain_value_with_a_stray_attribute_is_caught() -> None:
    money = _played()
    object.__setattr__(money.state, "_memo", {})
    with pytest.raises(AssertionError, match="_memo"):
        _plain(money, "money")
