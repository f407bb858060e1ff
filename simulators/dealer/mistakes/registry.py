"""The injectors by catalogue code: ``MISTAKES["premature_flop"]`` is the class that commits it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypeVar

if TYPE_CHECKING:
    from simulators.dealer.mistakes.base import Mistake

M = TypeVar("M", bound="type[Mistake]")

#: Catalogue code -> its injector class (filled by the modules of this package as they load).
MISTAKES: Final[dict[str, type[Mistake]]] = {}


def register(cls: M) -> M:
    """Class decorator: the injector of ``cls.code`` (one per code)."""
    code = cls.code
    if code is None or code in MISTAKES:
        raise ValueError(f"{cls.__name__}: no code, or a second injector for {code!r}")
    MISTAKES[code] = cls
    return cls
