"""The pure core: ``step(state, received) -> (state, outputs)``.

No I/O, no asyncio, no clock, no randomness, no logging of hole cards. Timestamps of alerts and
state come from the events themselves, alert ids count up from the hand number, so replaying the
same messages gives exactly the same outputs.
"""

from __future__ import annotations

from contract.models import Alert, DeviceCommand, HandResult, PublicState
from engine.api import EngineSettings, Outputs, Received
from engine.state import EngineState, new_state, public_of, state_key, to_public


def initial_state(settings: EngineSettings) -> EngineState:
    """The state of a table that has seen nothing yet."""
    return new_state(settings)


def step(state: EngineState, received: Received) -> tuple[EngineState, Outputs]:
    """Apply one received message; return the new state and what changed."""
    machine = state.machine.copy()  # its lists of this step's outputs are new and empty
    machine.handle(received)
    # Most steps produce none of these: the empty lists are kept, not replaced.
    alerts: tuple[Alert, ...] = ()
    commands: tuple[tuple[str, DeviceCommand], ...] = ()
    hands: tuple[HandResult, ...] = ()
    if machine.book.changes:
        alerts = tuple(machine.book.changes)
        machine.book.changes = []
    if machine.commands:
        commands = tuple(machine.commands)
        machine.commands = []
    if machine.hands_out:
        hands = tuple(machine.hands_out)
        machine.hands_out = []
    key = state_key(machine)
    public = None
    if alerts or key != machine.state_key:
        machine.state_key = key
        public = public_of(machine, key)
    return EngineState(machine), Outputs(alerts, public, commands, hands)


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

    def restore(self, state: EngineState) -> None:
        """Carry on from ``state`` (a checkpoint's): the next message is handled after it."""
        self._state = state

    def public_state(self) -> PublicState:
        return public_state(self._state)
