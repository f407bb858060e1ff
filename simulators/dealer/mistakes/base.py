"""What a mistake injector is: hooks at the points of a hand where a dealer can go wrong.

The legal dealer (:class:`simulators.dealer.dealer.VirtualDealer`) calls these hooks as it plays
a hand; :class:`Mistake` itself plays every one of them legally (it is the "no mistake" of a legal
hand). An injector overrides the one or two hooks where its code happens, tags the step that
completes the evidence with the code, then carries out the remedy the alert asks for. With
``ignore_remedy`` (``remedy_not_followed``) it fails to follow that remedy first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from contract.models import Profile
from simulators.dealer.hand import PACE, HandPlay
from simulators.dealer.steps import MoveButton, Shuffle, Step

if TYPE_CHECKING:
    from simulators.dealer.dealer import VirtualDealer
    from simulators.dealer.money import Settlement


@dataclass
class DealPlan:
    """How the two rounds of the deal go: which seat each card goes to, and what goes wrong."""

    #: The seat of each card, in dealing order.
    targets: list[int]
    #: Card index -> the code its placing completes.
    tags: dict[int, str] = field(default_factory=dict)
    #: Card index -> the code of a hole card dealt face up.
    exposed: dict[int, str] = field(default_factory=dict)
    #: Card index of a tag from no deck of the registry (a fouled deck).
    foreign: int | None = None
    #: Card index after which the dealer calls a misdeal (None: the deal completes).
    misdeal_after: int | None = None


class Mistake:
    """A dealer's mistake and its remedy; this base class makes none (a legal hand)."""

    #: The catalogue code (None: no mistake).
    code: ClassVar[str | None] = None
    #: The profiles under which the engine can raise this code.
    profiles: ClassVar[tuple[Profile, ...]] = ("roberts", "tda")
    #: Whether the dealer can fail to follow this code's remedy (``remedy_not_followed``).
    ignorable: ClassVar[bool] = False
    #: Whether the mistake needs a table that reads chips (and the players' stacks).
    chips: ClassVar[bool] = False
    #: The house rules (``simulators.dealer.catalogue.HOUSE_RULES``) the mistake needs, and those
    #: under which the engine reports it under another code.
    needs: ClassVar[frozenset[str]] = frozenset()
    not_with: ClassVar[frozenset[str]] = frozenset()
    #: Players kept in the hand by the betting (folds stop there).
    keep: ClassVar[int] = 1

    def __init__(self, *, ignore_remedy: bool = False) -> None:
        self.ignore_remedy = ignore_remedy
        #: The street the mistake happens on (board mistakes), chosen in :meth:`plan_streets`.
        self.street: str | None = None
        #: True: that street is turned before the betting round before it is complete.
        self.premature = False
        #: A seat that must stay in the hand until the showdown (it forfeits its claim there).
        self.protected: int | None = None

    # ------------------------------------------------------------------ choosing

    @classmethod
    def infeasible(cls, dealer: VirtualDealer) -> str | None:
        """Why the mistake cannot happen at this table now (None: it can)."""
        return None

    @classmethod
    def resolve(cls, dealer: VirtualDealer, *, probe: bool = False) -> tuple[str | None, bool]:
        """(the code to commit, whether its remedy is then not followed)."""
        return cls.code, False

    # ------------------------------------------------------------------ before the deal

    def seat_changes(self, dealer: VirtualDealer, steps: list[Step]) -> None:
        """Players join or leave so that the mistake can happen at this table."""

    def place_button(self, dealer: VirtualDealer, steps: list[Step], due: int) -> None:
        """The dealer moves the button to the seat it is due in front of."""
        if due != dealer.button:
            steps.append(MoveButton(seat=due, pause_s=PACE["button"]))

    def unposted_blind(self, dealer: VirtualDealer, small: int, big: int) -> int | None:
        """A blind that is not posted (None: both are)."""
        return None

    def shuffle(self, play: HandPlay, dealer: VirtualDealer, deck: str) -> None:
        """The deck collected after the last hand goes through the shuffler."""
        play.emit(Shuffle(deck=deck, pause_s=PACE["shuffle"]))

    def new_hand(self, play: HandPlay, due: int) -> None:
        """The dealer presses ``new_hand``."""
        play.press("new_hand")

    def rig_board(self, play: HandPlay) -> None:
        """Arrange the deck in play before the deal (the shuffler reports no order)."""

    # ------------------------------------------------------------------ the deal

    def plan_deal(self, play: HandPlay, targets: list[int]) -> DealPlan:
        """Where the cards of the deal go."""
        return DealPlan(targets)

    def after_card(self, play: HandPlay, index: int) -> None:
        """Right after card ``index`` of the deal lay on the table."""

    def after_deal(self, play: HandPlay) -> bool:
        """Right after the deal; False when a misdeal was called."""
        return True

    # ------------------------------------------------------------------ streets and showdown

    def plan_streets(self, play: HandPlay) -> None:
        """Choose the street the mistake happens on (sets :attr:`street`)."""

    def deal_street(self, play: HandPlay, street: str, count: int) -> None:
        """Deal :attr:`street` (only called for that street)."""
        play.street(count)

    def showdown_muck(self, play: HandPlay, seat: int) -> bool:
        """True when the mistake mucked ``seat``'s hand at the showdown itself."""
        return False

    # ------------------------------------------------------------------ chips

    def stacks(self, dealer: VirtualDealer, stacks: dict[int, int]) -> None:
        """Change the players' stacks before the hand (off the table, unseen)."""

    def blind_amount(self, play: HandPlay, seat: int, due: int) -> int:
        """What ``seat`` puts in its betting area before the deal (``due``: blind and ante)."""
        return due

    def act(self, play: HandPlay, seat: int) -> bool:
        """True when the mistake played ``seat``'s turn (and booked it in the ledger)."""
        return False

    def uncalled_back(self, play: HandPlay, seat: int, uids: list[str]) -> bool:
        """True when the mistake handled the uncalled chips (they stay in front, then)."""
        return False

    def sweep(self, play: HandPlay) -> bool:
        """True when the mistake swept the bets itself (or on purpose did not)."""
        return False

    def pushes(self, play: HandPlay, plan: Settlement) -> bool:
        """True when the mistake carried out the rake and the pushes itself."""
        return False
