"""The irregularity codes the virtual dealer can commit, as ``shared/rules/irregularities.md`` lists them."""

from __future__ import annotations

from typing import Final

from contract.models import Profile

#: Every dealing irregularity of the catalogue, in the catalogue's order.
CATALOGUE_CODES: Final[tuple[str, ...]] = (
    "misdeal_exposed_early",
    "exposed_card",
    "misdeal_exposed_multiple",
    "extra_card",
    "misdeal_extra_cards",
    "misdeal_wrong_count",
    "misdeal_wrong_first_seat",
    "misdeal_empty_seat",
    "misdeal_seat_skipped",
    "misdeal_out_of_sequence",
    "button_misplaced",
    "blinds_missing",
    "premature_flop",
    "premature_turn",
    "premature_river",
    "board_too_many_cards",
    "missing_burn",
    "extra_burn",
    "fouled_deck",
    "deck_check_failed",
    "board_claim_forfeited",
    "remedy_not_followed",
)

#: Codes whose remedy is a misdeal: every card back, the deck replaced, a redeal, same button.
MISDEAL_CODES: Final[frozenset[str]] = frozenset(
    {
        "misdeal_exposed_early",
        "misdeal_exposed_multiple",
        "misdeal_extra_cards",
        "misdeal_wrong_count",
        "misdeal_wrong_first_seat",
        "misdeal_empty_seat",
        "misdeal_seat_skipped",
        "misdeal_out_of_sequence",
        "fouled_deck",
    }
)

#: Codes the dealer can choose to inject as the hand's mistake. ``remedy_not_followed`` is not
#: among them: it is committed while carrying out the remedy of one of these (see
#: ``DealerSettings.ignore_remedy_rate``) and chosen as a follow-up of a mistake that allows it.
PRIMARY_CODES: Final[tuple[str, ...]] = tuple(c for c in CATALOGUE_CODES if c != "remedy_not_followed")


def injectable_codes(profile: Profile) -> tuple[str, ...]:
    """The primary codes that a hand can raise under ``profile``.

    Under ``tda`` one extra card is already a misdeal (``misdeal_wrong_count``), so a second extra
    card (``misdeal_extra_cards``) and the ``extra_card`` warning can never be raised.
    """
    if profile == "tda":
        return tuple(c for c in PRIMARY_CODES if c not in ("extra_card", "misdeal_extra_cards"))
    return PRIMARY_CODES


def raisable_codes(profile: Profile) -> tuple[str, ...]:
    """Every catalogue code a session under ``profile`` can raise (primary codes + follow-up)."""
    return (*injectable_codes(profile), "remedy_not_followed")
