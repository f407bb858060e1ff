"""Text from outside (payloads, topics, devices) made safe for an alert or a log line.

A payload's text never reaches the dealer's screen or the log as it came: control and other
unprintable characters are escaped and the length is bounded, so that a publisher can neither
forge log lines nor fill a screen. Engine and controller both use these helpers.
"""

from __future__ import annotations

import re
from typing import Final

#: Identifiers (fault codes) shown to the dealer as they are: short, lower case, no spaces.
_IDENTIFIER: Final = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


def bounded(text: str, limit: int = 120) -> str:
    """``text`` with unprintable characters escaped (``\\x1b``, ``\\u2028``), at most ``limit``
    characters (a longer text ends with ``...``)."""
    if len(text) <= limit and text.isprintable():
        return text  # the common case, without a loop (a flood of bad payloads comes here)
    out = []
    size = 0
    # Escaping only lengthens: no character past ``limit + 1`` can be part of the result.
    for char in text[: limit + 1]:
        piece = char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
        size += len(piece)
        if size > limit:
            out.append("...")
            break
        out.append(piece)
    return "".join(out)


def identifier(text: str) -> str | None:
    """``text`` when it is a short lower-case identifier (``door_open``), else None."""
    return text if _IDENTIFIER.match(text) else None
