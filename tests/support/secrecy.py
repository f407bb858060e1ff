"""Does a public message name a hole card nobody may know, or a tag UID?

What the devices said decides what is public: a card seen face up (an exposure, a showdown) or
on the board. A hole card is a card that arrived in a seat zone face down; it is *hidden* until
it is seen face up. :class:`Audit` follows the device events in the order the broker delivered
them, together with the public messages, and reports every public message naming a tag UID, or
a card (by its code, e.g. ``Ah``) that is hidden at that moment.

Two refinements keep it exact over a long run with reshuffled decks:

- a deck's cards are forgotten when that deck is shuffled (``shuffle_complete``);
- a text is judged from the first time it was published: an alert raised when its card was
  exposed ("... was exposed (8d) ...") may still be listed in a later state, or logged as
  resolved, after the same physical card went back into a deck and was dealt face down again.
  That names no secret of the new hand; a text first published while the card was hidden does.
  A bare card code (``"Ah"`` in a list) is judged at each publication.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from config.registry import DeckRegistry
from contract.models import ShuffleCompleteEvent, TagEvent, parse_event

#: A card code standing alone in text or JSON (``"Ah"``, ``(6d)``), not inside a word.
CARD = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][shdc])(?![A-Za-z0-9])")
#: A run of hex digits long enough to be a tag UID.
HEX = re.compile(r"[0-9A-Fa-f]{8,}")


@dataclass
class Audit:
    registry: DeckRegistry
    #: UIDs dealt face down to a seat and not public since -> when they became hidden.
    hidden: dict[str, int] = field(default_factory=dict)
    #: UIDs known public (face up, or on the board) since their deck's last shuffle.
    public: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    #: Counters: how much the audit saw (a test asserts they are not trivially small).
    hole_cards: int = 0
    named_cards: int = 0
    clock: int = 0
    _first_seen: dict[str, int] = field(default_factory=dict)

    def _card(self, uid: str) -> tuple[str, str] | None:
        card = self.registry.lookup(uid)
        return (card.deck, card.card) if card is not None else None

    def device_event(self, topic: str, payload: bytes) -> None:
        """Follow what a device said (only devices may say where cards are)."""
        self.clock += 1
        try:
            event = parse_event(topic, payload)
        except ValueError:
            return
        if isinstance(event, ShuffleCompleteEvent) and event.deck is not None:

            def other_deck(uid: str) -> bool:
                card = self._card(uid)
                return card is None or card[0] != event.deck

            self.public = {u for u in self.public if other_deck(u)}
            self.hidden = {u: t for u, t in self.hidden.items() if other_deck(u)}
        if not isinstance(event, TagEvent) or not event.present:
            return
        if event.face == "up" or event.zone == "board":
            self.public.add(event.uid)
            self.hidden.pop(event.uid, None)
        elif event.zone.startswith("seat:") and event.uid not in self.public | self.hidden.keys():
            self.hole_cards += 1
            self.hidden[event.uid] = self.clock

    def _hidden_codes(self, since_before: int) -> set[str]:
        public = {c[1] for u in self.public if (c := self._card(u)) is not None}
        hidden = {
            c[1] for u, t in self.hidden.items() if t < since_before and (c := self._card(u)) is not None
        }
        return hidden - public

    def public_text(self, where: str, text: str) -> None:
        """Check one published text (a JSON string, a log line's message) as of now."""
        self.clock += 1
        for run in HEX.findall(text):
            if self.registry.lookup(run) is not None:
                self.problems.append(f"{where}: names tag UID {run}: {text[:300]}")
        found = CARD.findall(text)
        if not found:
            return
        self.named_cards += len(found)
        first = self.clock if CARD.fullmatch(text) else self._first_seen.setdefault(text, self.clock)
        leaked = [code for code in found if code in self._hidden_codes(first)]
        for code in leaked:
            self.problems.append(f"{where}: names hidden hole card {code}: {text[:300]}")

    def public_message(self, topic: str, payload: bytes) -> None:
        """Check a message of a public topic: its topic, and every string in its JSON."""
        if "/dev/" in topic:
            self.problems.append(f"{topic}: a device topic reached a public reader")
        try:
            data = json.loads(payload)
        except ValueError:
            self.public_text(topic, payload.decode("utf-8", "replace"))
            return
        for text in _strings(data):
            self.public_text(topic, text)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []
