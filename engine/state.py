"""The engine state (work in progress; treat as opaque and immutable)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from contract.models import PublicState, SeatState
from engine.api import EngineSettings

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class EngineState:
    settings: EngineSettings


def new_state(settings: EngineSettings) -> EngineState:
    return EngineState(settings=settings)


def to_public(state: EngineState) -> PublicState:
    seats = [
        SeatState(seat=s, occupied=False, in_hand=False, cards=0)
        for s in range(1, state.settings.seats + 1)
    ]
    return PublicState(ts=EPOCH, hand=0, phase="idle", seats=seats, profile=state.settings.profile)
