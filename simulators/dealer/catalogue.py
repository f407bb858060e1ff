"""The irregularity codes the virtual dealer can commit: the engine's catalogue, one list.

The codes and which of them are misdeals come from ``engine.catalogue`` (which mirrors
``docs/rules/irregularities.md``); which profile can raise each code comes from its injector
(:mod:`simulators.dealer.mistakes`).
"""

from __future__ import annotations

from typing import Final

from contract.models import Profile
from engine.catalogue import CATALOGUE, CHIP_CODES, DEALING_CODES, SESSION_CODES
from simulators.dealer.mistakes import MISTAKES

#: Every irregularity of the catalogue the dealer can commit: the dealing codes, then the codes of
#: "Chips, pots and showdown" (irregularities.md) with ``unknown_chip`` (a tag in a chip zone in
#: no registry), then the session's codes (``engine.catalogue.SESSION_CODES``). Each has an
#: injector (a test fails when one has none).
CATALOGUE_CODES: Final[tuple[str, ...]] = (
    *DEALING_CODES,
    *(c for c in CHIP_CODES if c not in DEALING_CODES),
    *(c for c in SESSION_CODES if c not in DEALING_CODES and c not in CHIP_CODES),
)

#: The house rules a table may set that some mistakes need (or exclude): ``max_rebuy`` (``[stakes]
#: max_rebuy``), ``max_absence_s`` (``[table] max_absence_s``), ``levels`` (a tournament's
#: ``[[stakes.levels]]``).
HouseRule = str
HOUSE_RULES: Final[frozenset[HouseRule]] = frozenset({"max_rebuy", "max_absence_s", "levels"})

#: Codes whose remedy is a misdeal: every card back, the deck replaced, a redeal, same button.
MISDEAL_CODES: Final[frozenset[str]] = frozenset(
    c for c in DEALING_CODES if c in CATALOGUE and CATALOGUE[c].misdeal
)

#: Codes the dealer can choose to inject as the hand's mistake. ``remedy_not_followed`` is not
#: among them: it is committed while carrying out the remedy of one of these (see
#: :mod:`simulators.dealer.mistakes.remedy`).
PRIMARY_CODES: Final[tuple[str, ...]] = tuple(c for c in CATALOGUE_CODES if c != "remedy_not_followed")


def injectable_codes(
    profile: Profile, *, chips: bool = False, house: frozenset[HouseRule] = frozenset()
) -> tuple[str, ...]:
    """The primary codes that a hand can raise under ``profile`` (``chips``: at a table that
    reads chips, its stacks too, and follows the betting; ``house``: the house rules of
    :data:`HOUSE_RULES` the table sets).

    Under ``tda`` one extra card is already a misdeal (``misdeal_wrong_count``), so a second extra
    card (``misdeal_extra_cards``) and the ``extra_card`` warning can never be raised. In a
    tournament (``levels``) a wrong blind is ``blinds_out_of_level``, never ``blind_wrong_amount``.
    """
    unknown = house - HOUSE_RULES
    if unknown:
        raise ValueError(f"unknown house rules {sorted(unknown)}")
    return tuple(
        c
        for c in PRIMARY_CODES
        if profile in MISTAKES[c].profiles
        and (chips or not MISTAKES[c].chips)
        and MISTAKES[c].needs <= house
        and not MISTAKES[c].not_with & house
    )


def raisable_codes(
    profile: Profile, *, chips: bool = False, house: frozenset[HouseRule] = frozenset()
) -> tuple[str, ...]:
    """Every catalogue code a session under ``profile`` can raise (primary codes + follow-up)."""
    return (*injectable_codes(profile, chips=chips, house=house), "remedy_not_followed")
