"""``remedy_not_followed``: another mistake whose remedy the dealer does not follow at first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simulators.dealer.mistakes.base import Mistake
from simulators.dealer.mistakes.registry import MISTAKES, register

if TYPE_CHECKING:
    from simulators.dealer.dealer import VirtualDealer


@register
class RemedyNotFollowed(Mistake):
    """Commits a primary mistake that allows it (a misdeal dealt on, a burn before the new flop)
    with ``ignore_remedy``; the step that breaks the remedy carries this code."""

    code = "remedy_not_followed"

    @classmethod
    def resolve(cls, dealer: VirtualDealer, *, probe: bool = False) -> tuple[str | None, bool]:
        allowed = dealer.allowed_codes()
        options = [
            code
            for code in ignorable_codes()
            if code in allowed and MISTAKES[code].infeasible(dealer) is None
        ]
        if not options:
            return None, True
        return (options[0] if probe else dealer.rng.choice(options)), True


def ignorable_codes() -> tuple[str, ...]:
    """Primary codes whose remedy the dealer can fail to follow: misdeals first, alphabetically."""
    from simulators.dealer.catalogue import MISDEAL_CODES

    ignorable = [code for code, mistake in MISTAKES.items() if mistake.ignorable]
    misdeals = sorted(c for c in ignorable if c in MISDEAL_CODES)
    return (*misdeals, *sorted(c for c in ignorable if c not in MISDEAL_CODES))
