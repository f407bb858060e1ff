"""The table every concern is attached to: the time, the alert book, the sensors, the cards on
the table, the hand's course, the state parts of the concerns, and the helpers every rule uses
(raise an alert, a remedy not followed, a misdeal).

Every container inside is either replaced when it changes or copied by ``Machine.copy``
(engine.machine); every value in them is immutable, so a copy is cheap and the previous state
never changes.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from engine.alerts import AlertBook
from engine.api import (
    EngineSettings,
)
from engine.betting.terms import Clear
from engine.board import BoardState
from engine.cards import CardState
from engine.catalogue import CATALOGUE
from engine.chips import ChipState
from engine.dealing import DealState
from engine.devices import DeviceState
from engine.handling import HandlingState
from engine.hands import HandPart
from engine.results import ResultState
from engine.seqtrack import EPOCH
from engine.sequences import SequenceState
from engine.session import SessionPart

if TYPE_CHECKING:
    from contract.models import DeviceCommand, HandResult
    from engine.betting.terms import Verdicts
    from engine.board import Board
    from engine.cards import Cards
    from engine.chips import Chips
    from engine.dealing import Dealing
    from engine.devices import Devices
    from engine.handling import Handling
    from engine.hands import Hands
    from engine.results import Results
    from engine.sequences import Sequences
    from engine.session import Session

class Table:
    """Everything the engine knows; mutated only inside a step, on a copy no state shares."""

    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings
        self.profile = settings.profile
        self.ts = EPOCH
        #: The latest event time seen (``ts`` goes back with a late or resent event; this does
        #: not): what the gap fill measures its waits on.
        self.clock = EPOCH
        self.book = AlertBook(settings.profile)
        #: Device commands produced by the current step (the core empties it after each step).
        self.commands: list[tuple[str, DeviceCommand]] = []
        # devices: their sequence numbers and the gap fill (engine.sequences: the state, and
        # the concern that follows it, which is rebuilt around a copy's state)
        self.device_seqs = SequenceState()
        self.sequences: Sequences
        # devices: their health, who may say what, tracking (engine.devices: the state, and the
        # concern that follows it)
        self.device_state = DeviceState()
        self.devices: Devices
        # the hand's course and the sensors it starts from (engine.hands: the state, and the
        # concern that follows it)
        self.hand_part = HandPart()
        self.hands: Hands
        self.state_key: object = None
        self.handling_state = HandlingState()
        # the cards on the table (engine.cards: the state, and the concern that follows it)
        self.card_state = CardState()
        self.cards: Cards
        # the deal and the decks (engine.dealing: the state, and the concern that follows it)
        self.deal_state = DealState()
        self.dealing: Dealing
        # the board and the burns (engine.board: the state, and the concern that follows it)
        self.board_state = BoardState()
        self.board: Board
        # the hand's money and result, and what lasts across hands (engine.results: the state,
        # and the concern that follows it)
        self.result_state = ResultState()
        self.results: Results
        # chips (engine.chips: the state, and the concern that follows it): where each chip tag
        # is read, where it is, chips read nowhere since (zone, event time), unknown tags
        self.chip_state = ChipState()
        self.chips: Chips
        self.handling: Handling
        self.reset_hand()
        #: Event time of the last critical alert: the dealer's reaction time runs from it.
        self.critical_at: datetime | None = None
        self.reaction = timedelta(seconds=settings.reaction_s)
        #: Events shown missing and not come again this long (event time) are lost.
        self.gap_wait = timedelta(seconds=settings.gap_wait_s)
        #: The time of the latest tag read applied: the reader's own clock (engine.handling).
        self.read_ts = EPOCH
        #: Hand results produced by the current step (the core resets it for each step).
        self.hands_out: list[HandResult] = []
        #: The session around the hands (engine.session): its part, and the concern over it.
        self.session_part = SessionPart()
        self.session: Session
        # (the concern objects are built by the dispatcher, engine.machine)

    def reset_hand(self) -> None:
        """A new hand (or a lost one forgotten): each part resets its hand's fields."""
        self.hand_part.new_hand()
        self.deal_state.new_hand()
        self.card_state.new_hand()
        self.board_state.new_hand()
        self.nf_keys: frozenset[str] = frozenset()
        self.fouled_seen: frozenset[str] = frozenset()
        # the hand's money (engine.results): the betting core, once the deal is complete
        self.result_state.new_hand()
        self.chip_state.unknown = {}
        # card handling (engine.handling): a fold half done, live hole cards read nowhere
        self.handling_state.reset()

    def begin_step(self) -> None:
        """Start a step on this working copy in place (engine.core.Engine: a copy nobody else
        holds). The lists of the last step's outputs were emptied when it ended."""
        self.card_state.changed = False

    def raise_alert(self, code: str, message: str, seat: int | None = None, **kw: object) -> str:
        severity = kw.get("severity") or CATALOGUE[code].severity_for(self.profile)
        if severity == "critical":
            self.critical_at = self.ts
        return self.book.raise_alert(
            code=code,
            ts=self.ts,
            hand=self.hand_part.hand,
            message=message,
            seat=seat,
            **kw,  # type: ignore[arg-type]
        )

    def session_out(self, verdicts: Verdicts) -> None:
        """The session part's findings as alerts: one per key, kept across hands (scope
        ``session``) until the part clears it."""
        for verdict in verdicts:
            if isinstance(verdict, Clear):
                if self.book.meta:
                    self.book.resolve_scope("session", self.ts, verdict.key)
                continue
            existing = self.book.find(verdict.code, verdict.key)
            if existing is None:
                self.raise_alert(
                    verdict.code, verdict.message, verdict.seat, scope="session", key=verdict.key
                )
            elif self.book.active[existing].message != verdict.message:
                self.book.update(existing, self.ts, message=verdict.message)

    def session_chip(self, uid: str, value: int, src: str | None, dst: str | None) -> bool:
        """A chip moved: the session follows stacks; True when the chip plays no part in the
        hand (added to a stack during it)."""
        session = self.session
        if not session.touches(uid, src, dst):
            return False
        won = uid in self.result_state.award_chips or uid in self.result_state.hand_awards
        skip, verdicts = session.on_chip(uid, value, src, dst, won=won, now=self.clock)
        self.session_out(verdicts)
        return skip

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
