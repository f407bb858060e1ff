"""The pure core: ``step(state, received) -> (state, outputs)``.

No I/O, no asyncio, no clock, no randomness, no logging of hole cards. Work in progress: the
signatures below are the stable API the service builds on.
"""

from __future__ import annotations

from contract.models import PublicState
from engine.api import NO_OUTPUTS, EngineSettings, Outputs, Received
from engine.state import EngineState, new_state, to_public


def initial_state(settings: EngineSettings) -> EngineState:
    """The state of a table that has seen nothing yet."""
    return new_state(settings)


def step(state: EngineState, received: Received) -> tuple[EngineState, Outputs]:
    """Apply one received message; return the new state and what changed."""
    del received
    return state, NO_OUTPUTS


def public_state(state: EngineState) -> PublicState:
    """The public table state (never hole cards)."""
    return to_public(state)


class Engine:
    """A small holder of the current state for the shell."""

    def __init__(self, settings: EngineSettings) -> None:
        self._state = initial_state(settings)

    def handle(self, received: Received) -> Outputs:
        """Feed one message; return its outputs."""
        self._state, outputs = step(self._state, received)
        return outputs

    @property
    def state(self) -> EngineState:
        return self._state

    def public_state(self) -> PublicState:
        return public_state(self._state)
