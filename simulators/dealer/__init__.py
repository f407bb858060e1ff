"""The virtual dealer: scripts of legal hands with injected catalogue mistakes (pure, seeded).

``VirtualDealer(decks, DealerSettings(...), seed=1).next_hand(mistake=...)`` gives a
:class:`HandScript` of physical steps (``testing.events.to_events`` renders them as device events).
"""

from simulators.dealer.catalogue import (
    CATALOGUE_CODES,
    MISDEAL_CODES,
    PRIMARY_CODES,
    injectable_codes,
    raisable_codes,
)
from simulators.dealer.dealer import (
    DRAW,
    IGNORABLE_CODES,
    PACE,
    DealerSettings,
    InfeasibleMistake,
    VirtualDealer,
)
from simulators.dealer.steps import (
    AwaitShuffle,
    DealerBadge,
    DeviceIds,
    FailDeckCheck,
    HandScript,
    LevelStart,
    Marker,
    Move,
    MoveButton,
    MoveChips,
    Place,
    PlaceChips,
    Press,
    Remove,
    SetBlind,
    SetOccupied,
    Shuffle,
    Step,
    TakeChips,
    Wait,
)

__all__ = [
    "CATALOGUE_CODES",
    "DRAW",
    "IGNORABLE_CODES",
    "MISDEAL_CODES",
    "PACE",
    "PRIMARY_CODES",
    "AwaitShuffle",
    "DealerBadge",
    "DealerSettings",
    "DeviceIds",
    "FailDeckCheck",
    "HandScript",
    "InfeasibleMistake",
    "LevelStart",
    "Marker",
    "Move",
    "MoveButton",
    "MoveChips",
    "Place",
    "PlaceChips",
    "Press",
    "Remove",
    "SetBlind",
    "SetOccupied",
    "Shuffle",
    "Step",
    "TakeChips",
    "VirtualDealer",
    "Wait",
    "injectable_codes",
    "raisable_codes",
]
