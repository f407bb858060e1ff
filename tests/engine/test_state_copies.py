"""The state parts whose ``copy`` shares every value (engine.dealing, engine.results, …): each
field is carried over, a field added later included (the copies name their fields one by one)."""

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


@pytest.mark.parametrize("part", SHARING, ids=lambda part: part.__name__)
def test_copy_carries_every_field(part: type) -> None:
    original = part()
    marks = {f.name: object() for f in fields(part)}
    for name, mark in marks.items():
        setattr(original, name, mark)  # a value of its own per field: a swapped one is seen
    copy = original.copy()
    assert type(copy) is part
    assert copy is not original
    for name, mark in marks.items():
        assert getattr(copy, name) is mark, name
