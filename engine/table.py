"""What every concern shares, as a plain part the dispatcher holds (engine.dispatcher): the
settings, the time, the hand number, the alert book and the step's outputs, and the helpers
every rule uses to raise its alerts (an alert, a remedy not followed, the dealer's reaction
time). Each concern is given it (``table``) next to the dispatcher (``machine``: the other
parts and concerns).

Every container inside is either replaced when it changes or copied by :meth:`Table.copy`;
every value in them is immutable, so a copy is cheap and the previous state never changes.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from engine.alerts import AlertBook
from engine.catalogue import CATALOGUE
from engine.seqtrack import EPOCH

if TYPE_CHECKING:
    from contract.models import DeviceCommand, HandResult
    from engine.api import EngineSettings


class Table:
    """The shared state of a step's working copy: mutated only inside a step."""

    # Slots, in the order the state's data lists them (engine.state_data): read on every step,
    # an attribute of a slot is looked up at once (a copy given a __dict__ is not, CPython 3.11).
    __slots__ = (  # noqa: RUF023 - not sorted: the order of the state's data
        "settings",
        "profile",
        "ts",
        "clock",
        "hand",
        "book",
        "commands",
        "hands_out",
        "state_key",
        "critical_at",
        "reaction",
        "gap_wait",
        "read_ts",
        "nf_keys",
    )

    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings
        self.profile = settings.profile
        self.ts = EPOCH
        #: The latest event time seen (``ts`` goes back with a late or resent event; this does
        #: not): what the gap fill measures its waits on.
        self.clock = EPOCH
        #: The hand number (engine.hands counts the hands): every alert carries it.
        self.hand = 0
        self.book = AlertBook(settings.profile)
        #: Device commands produced by the current step (the core empties it after each step).
        self.commands: list[tuple[str, DeviceCommand]] = []
        #: Hand results produced by the current step (the core resets it for each step).
        self.hands_out: list[HandResult] = []
        #: The public state's key last published (engine.step).
        self.state_key: object = None
        #: Event time of the last critical alert: the dealer's reaction time runs from it.
        self.critical_at: datetime | None = None
        self.reaction = timedelta(seconds=settings.reaction_s)
        #: Events shown missing and not come again this long (event time) are lost.
        self.gap_wait = timedelta(seconds=settings.gap_wait_s)
        #: The time of the latest tag read applied: the reader's own clock (engine.handling).
        self.read_ts = EPOCH
        #: The steps of remedies found not followed this hand (each said once a hand).
        self.nf_keys: frozenset[str] = frozenset()

    def copy(self) -> Table:
        """A working copy for the next step: the alert book copied, the outputs empty."""
        new = Table.__new__(Table)
        for name in Table.__slots__:
            setattr(new, name, getattr(self, name))
        new.book = self.book.copy()
        new.commands = []
        new.hands_out = []
        return new

    def new_hand(self) -> None:
        """A new hand: nothing said of it yet."""
        self.nf_keys = frozenset()

    def raise_alert(self, code: str, message: str, seat: int | None = None, **kw: object) -> str:
        severity = kw.get("severity") or CATALOGUE[code].severity_for(self.profile)
        if severity == "critical":
            self.critical_at = self.ts
        return self.book.raise_alert(
            code=code,
            ts=self.ts,
            hand=self.hand,
            message=message,
            seat=seat,
            **kw,  # type: ignore[arg-type]
        )

    def not_followed(
        self, key: str, message: str, remedy: tuple[str, ...], seat: int | None = None, *, of: str | None
    ) -> None:
        """Raise ``remedy_not_followed`` once per missed step and hand; its rule line is that of
        the code whose remedy it is (``of``; None: the catalogue's own)."""
        if key in self.nf_keys:
            return
        self.nf_keys |= {key}
        rule = CATALOGUE[of].rule_for(self.profile) if of is not None else None
        self.raise_alert("remedy_not_followed", message, seat, remedy=remedy, rule=rule)

    def misdeal_code(self) -> str | None:
        """The code of the misdeal that voided this hand (its alert, while active)."""
        for alert_id, meta in self.book.meta.items():
            if meta.scope == "misdeal":
                return self.book.active[alert_id].code
        return None

    def reacting(self) -> bool:
        """Whether the dealer is still within his reaction time of the last critical alert."""
        at = self.critical_at
        return at is not None and self.ts - at < self.reaction
