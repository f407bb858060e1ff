"""The state parts whose ``copy`` shares every value (engine.dealing, engine.results, …): each
field is carried over, a field added later included (the copies name their fields one by one);
a field the part updates in place is copied instead (equal, not the same dict)."""

from __future__ import annotations

from dataclasses import fields

import pytest

from engine.board import BoardState
from engine.dealing import DealState
from engine.devices import DeviceState
from engine.handling import HandlingState
from engine.results import ResultState
from engine.session import SessionPart

SHARING = [BoardState, DealState, DeviceState, HandlingState, ResultState, SessionPart]
#: The dicts a part updates in place (its copy copies them).
IN_PLACE: dict[type, frozenset[str]] = {ResultState: frozenset({"owners"})}


@pytest.mark.parametrize("part", SHARING, ids=lambda part: part.__name__)
def test_copy_carries_every_field(part: type) -> None:
    original = part()
    in_place = IN_PLACE.get(part, frozenset())
    marks: dict[str, object] = {f.name: {f.name: 1} if f.name in in_place else object() for f in fields(part)}
    for name, mark in marks.items():
        setattr(original, name, mark)  # a value of its own per field: a swapped one is seen
    copy = original.copy()
    assert type(copy) is part
    assert copy is not original
    for name, mark in marks.items():
        if name in in_place:
            assert getattr(copy, name) == mark, name
            assert getattr(copy, name) is not mark, name
        else:
            assert getattr(copy, name) is mark, name
