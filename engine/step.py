"""The pure core: ``step(state, received) -> (state, outputs)``.

No I/O, no asyncio, no clock, no randomness, no logging of hole cards. Timestamps of alerts and
state come from the events themselves, alert ids count up from the hand number, so replaying the
same messages gives exactly the same outputs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from contract.models import Alert, DeviceCommand, HandResult, PublicState
from engine.api import EngineSettings, Outputs, Received
from engine.dispatcher import Machine
from engine.state import NO_PUBLIC, EngineState, PublicCache, new_state, public_of, state_key, to_public


def initial_state(settings: EngineSettings) -> EngineState:
    """The state of a table that has seen nothing yet."""
    return new_state(settings)


#: What most messages produce (outputs are immutable: one value serves them all).
NOTHING: Final = Outputs((), None)


def step(state: EngineState, received: Received) -> tuple[EngineState, Outputs]:
    """Apply one received message; return the new state and what changed."""
    machine = state.machine.copy()  # its lists of this step's outputs are new and empty
    outputs = advance(machine, received, state.public)
    return EngineState(machine, state.public), outputs


def advance(machine: Machine, received: Received, cache: PublicCache, build_state: bool = True) -> Outputs:
    """Apply one received message to ``machine``, a working copy no state shares; return what
    changed (the shell's :class:`Engine` and :func:`step` both end here). ``cache``: what the
    last public state was built from. Without ``build_state``, a changed public state is not built
    (its :attr:`Outputs.state` is None, the table's ``state_key`` is new all the same): a replay,
    which publishes only the last (:meth:`Engine.deferred_state`)."""
    machine.handle(received)
    # Most steps produce none of these: the empty lists are kept, not replaced.
    alerts: tuple[Alert, ...] = ()
    commands: tuple[tuple[str, DeviceCommand], ...] = ()
    hands: tuple[HandResult, ...] = ()
    table = machine.table
    book = table.book
    if book.changes:
        alerts = tuple(book.changes)
        book.changes = []
    if table.commands:
        commands = tuple(table.commands)
        table.commands.clear()  # (the list the machine's concerns append to)
    if table.hands_out:
        hands = tuple(table.hands_out)
        table.hands_out = []
    key = state_key(machine, cache)
    if alerts or key != table.state_key:
        table.state_key = key
        if not build_state:
            cache.public = NO_PUBLIC  # (the next state built shares nothing with one before)
            return Outputs(alerts, None, commands, hands)
        # (no alert change: the alerts are those of the last public state built)
        public = public_of(machine, key, not alerts, cache)  # (positional: a cheaper call)
        return Outputs(alerts, public, commands, hands)
    if commands or hands:
        return Outputs(alerts, None, commands, hands)
    return NOTHING  # most messages: nothing to publish


def public_state(state: EngineState) -> PublicState:
    """The public table state (never hole cards)."""
    return to_public(state)


def next_due(state: EngineState) -> datetime | None:
    """The earliest event time at which time alone changes something (None: nothing): the shell
    gives the engine a :class:`engine.api.TimeReached` of it when no message has brought that
    time by then (docs/engine.md, "Time on a quiet table")."""
    return state.machine.next_due()


#: Messages the holder applies to its working copy in place before it starts a new one: what a
#: failed message replays to go back (a few ms), against one copy of the machine per run.
REBASE_EVERY: Final = 256


class Engine:
    """The shell's holder of the current state: :func:`step` without a copy per message.

    It applies messages in place to a working copy of the machine that nobody else holds, so a
    step costs no copy of the table. The state it hands out (:attr:`state`) is frozen: the next
    message starts a new working copy, as :func:`step` does. A message whose step raises leaves
    the state as it was before it, as with :func:`step`: the holder goes back to its *base* (the
    state last handed out or restored, a snapshot of its own taken every ``REBASE_EVERY``
    messages, or at first the initial state, built again) and applies again the messages taken
    since (the core is deterministic).
    """

    def __init__(self, settings: EngineSettings) -> None:
        self._settings = settings
        self._state = initial_state(settings)
        # What a failed message goes back to (see the class docstring); None: the initial state.
        self._base: EngineState | None = None
        self._since: list[Received] = []  # messages applied in place since the base
        self._working = True  # the state's machine is a working copy only this holder sees
        # The state's two parts, read on every message (a named tuple's fields are not looked
        # up at once by CPython 3.11, plain attributes are).
        self._machine = self._state.machine
        self._cache = self._state.public
        # The event time of the last public state a step without ``build_state`` did not build (None:
        # none owed): the time the state published then would have carried.
        self._owed_ts: datetime | None = None
        #: The last step was taken without ``build_state`` and changed the public state (owed).
        self.deferred_change = False

    def handle(self, received: Received, *, build_state: bool = True) -> Outputs:
        """Feed one message; return its outputs. Without ``build_state`` (a replay), a changed
        public state is not built but owed: :meth:`deferred_state` builds the last one."""
        if not self._working:  # the state was handed out: it stays as it is, the base
            self._base = self._state
            self._set(EngineState(self._machine.copy(), self._cache))
            self._since = []
            self._working = True
        elif len(self._since) >= REBASE_EVERY:
            # a base nearer than the last: the working copy's parts as they are now (a
            # snapshot: no concerns, so nothing but this holder refers to it)
            self._base = EngineState(self._machine.snapshot(), self._cache)
            self._since = []
        if not build_state:
            return self._replayed(received)
        try:
            outputs = advance(self._machine, received, self._cache)  # (positional: a cheaper call)
        except BaseException:
            self._back_to_base()
            raise
        self._since.append(received)
        self.deferred_change = False
        return outputs

    def _replayed(self, received: Received) -> Outputs:
        """:meth:`handle` without ``build_state`` (a replay): a changed public state is owed.
        (Apart, so that the live path reads no state key of its own: it runs on every message.)"""
        table = self._machine.table
        before = table.state_key
        try:
            outputs = advance(self._machine, received, self._cache, False)
        except BaseException:
            self._back_to_base()
            raise
        self._since.append(received)
        self.deferred_change = table.state_key is not before
        if self.deferred_change:
            self._owed_ts = table.ts
        return outputs

    @property
    def state_owed(self) -> bool:
        """A step without ``build_state`` changed the public state since :meth:`deferred_state`."""
        return self._owed_ts is not None

    def deferred_state(self) -> PublicState | None:
        """The public state the last step that changed it would have published, had it been
        built then (None: no step without ``build_state`` changed it since). Built once, at the end
        of a replay, instead of once per change: everything it shows but its time is as it was
        after that step (any later change would have been owed in turn)."""
        ts, self._owed_ts = self._owed_ts, None
        if ts is None:
            return None
        state = public_of(self._machine)
        return state if state.ts == ts else state.model_copy(update={"ts": ts})

    def _set(self, state: EngineState) -> None:
        self._state = state
        self._machine, self._cache = state

    def _back_to_base(self) -> None:
        """The state before the failed message: the base and the messages taken since."""
        base = self._base
        machine = base.machine.copy() if base is not None else initial_state(self._settings).machine
        for received in self._since:
            advance(machine, received, self._cache)
        self._set(EngineState(machine, self._cache))

    @property
    def state(self) -> EngineState:
        """The current state; frozen from now on (the next message starts a new working copy)."""
        self._working = False
        return self._state

    @property
    def hand(self) -> int:
        """The current hand number (without freezing the state)."""
        return self._machine.table.hand

    @property
    def phase(self) -> str:
        """The current phase (without freezing the state)."""
        return self._machine.hand_part.phase

    @property
    def clock(self) -> datetime:
        """The latest event time the engine has seen (without freezing the state)."""
        return self._machine.table.clock

    def next_due(self) -> datetime | None:
        """:func:`next_due` of the current state (without freezing it)."""
        return self._machine.next_due()

    def restore(self, state: EngineState) -> None:
        """Carry on from ``state`` (a checkpoint's): the next message is handled after it."""
        self._set(state)
        self._owed_ts = None
        self._working = False

    def public_state(self) -> PublicState:
        return public_state(self._state)
