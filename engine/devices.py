"""Device health (status, faults, bad payloads, the sequence findings reported), who may say
what, lost dealer inputs, sensors and decks; the sequence policy and the gap fill are in
:mod:`engine.sequences`."""

from __future__ import annotations

from contract.models import (
    ActionInput,
    FaultEvent,
    KeyInput,
    ShuffleCompleteEvent,
    Status,
)
from contract.text import bounded, identifier
from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    PayloadRejected,
)
from engine.kinds import EVENT_KIND, KIND_NAMES, Learnt, learns
from engine.memory import Memory
from engine.seqtrack import REPORT_EVERY, SEQ_AHEAD
from engine.sequences import Lost


class DeviceRules(Memory):
    """Device health, the button and blind sensors, and the deck states."""

    def _sequence_findings(self) -> None:
        """Report what the sequence policy found (engine.sequences), in order."""
        findings = self.sequences.findings
        for finding in findings:
            if isinstance(finding, Lost):
                self._lost(finding.device, finding.what)
            else:
                self._far_report(finding.device, finding.high, finding.far)
        findings.clear()

    def _far_report(self, device: str, high: int, far: int) -> None:
        """Events with a seq far from the device's were ignored (updated at most once a second)."""
        key = f"{device}#far"
        message = (
            f"Device {bounded(device, 64)} sent {far} event(s) with a sequence number far from "
            f"its last one ({high}): they were ignored."
        )
        existing = self.book.find("bad_payload", key)
        if existing is None:
            self._raise("bad_payload", message, scope="device", key=key, device=device)
        elif self.ts - self.book.active[existing].ts >= REPORT_EVERY:
            self.book.update(existing, self.ts, message=message)

    def _lost(self, device: str, what: str) -> None:
        """Events of ``device`` are lost for good: say so; this hand is not tracked."""
        message = (
            f"Device {bounded(device, 64)} {what}: they were lost, so this hand is not tracked; "
            "tracking resumes with the next shuffle or new hand."
        )
        key = f"{device}#seq"
        existing = self.book.find("device_fault", key)
        if existing is None:
            self._raise("device_fault", message, scope="hand", key=key, device=device)
        else:
            self.book.update(existing, self.ts, message=message)
        self.untracked = True
        self.evidence_missing = True
        self._update_tracking()

    def _status(self, device: str, status: Status) -> None:
        self.sequences.status(device, status)
        self.dev_state = {**self.dev_state, device: status.state}
        self._update_tracking()
        # only a short identifier ("lost", "stopped"): a status' free text is not for the dealer
        known = identifier(status.detail or "")
        detail = f" ({known})" if known else ""
        if status.state == "online":
            self.book.resolve_scope("device", self.ts, device)
            self.book.resolve_scope("device", self.ts, f"{device}#fault")
            self.book.resolve_scope("device", self.ts, f"{device}#far")
            # events lost stay lost: that alert lasts until the hand is over
            return
        code = "device_offline" if status.state == "offline" else "device_fault"
        if self.book.find(code, device) is not None:
            return
        if status.state == "offline":
            tail = ": the hand is not being tracked until it is back." if self._may_read(device) else "."
            message = f"Device {bounded(device, 64)} is offline{detail}{tail}"
        else:
            message = f"Device {bounded(device, 64)} reports a fault{detail}."
        self._raise(code, message, scope="device", key=device, device=device)

    def _fault(self, device: str, event: FaultEvent) -> None:
        key = f"{device}#fault"
        # The code when it is a plain identifier (jam, door_open); the device's free text stays
        # in the journal: payload text never reaches the dealer's screen.
        code = identifier(event.code) or "with a code that is not a plain name"
        message = f"Device {bounded(device, 64)} reports fault {code}."
        existing = self.book.find("device_fault", key)
        if existing is None:
            self._raise("device_fault", message, scope="device", key=key, device=device)
        else:
            self.book.update(existing, self.ts, message=message)

    def _rejected(self, rejected: PayloadRejected) -> None:
        """One alert per topic, counting its rejected payloads (the shell reports at most once
        a second); the latest reason, bounded and escaped."""
        count = max(1, rejected.count)
        what = "A message" if count == 1 else f"{count} messages"
        message = (
            f"{what} on {bounded(rejected.topic, 120)} did not match the contract and "
            f"{'was' if count == 1 else 'were'} not taken; the latest: "
            f"{bounded(rejected.error, 200)}"
        )
        key = rejected.topic
        existing = self.book.find("bad_payload", key)
        device = bounded(rejected.device, 60) if rejected.device is not None else None
        if existing is None:
            self._raise("bad_payload", message, scope="hand", key=key, device=device)
        else:
            self.book.update(existing, self.ts, message=message)

    def _admitted(self, received: DeviceEventReceived | DeviceStatusReceived) -> bool:
        """Who may say what (docs/engine.md): whether a device's message is taken. A device
        sends only the events of its kind (declared, or shown by its first event accepted in
        its session; ``fault`` from any); with ``declared_only`` an undeclared device is not
        listened to. What is refused is reported as ``bad_payload`` naming the device, never
        taken as evidence (nor sequenced: it is not one of the device's events).

        (On the path of every event: the common cases first, with the fewest lookups.)"""
        device = received.device
        settings = self.settings
        kind = settings.device_kinds.get(device)
        if kind is None and settings.declared_only:
            self._refuse(
                received,
                "undeclared",
                "Messages from devices not declared in the configuration were ignored "
                "({count} so far; the latest from {device}).",
            )
            return False
        if type(received) is DeviceStatusReceived:
            return True
        event = received.event  # type: ignore[union-attr]
        wanted = EVENT_KIND[event.type]
        if kind is None:
            learnt = self.dev_kind.get(device)
            session = event.session
            if learnt is not None and wanted == learnt[1] and (session is None or session == learnt[0]):
                return True  # an undeclared device's event of its kind, in its session
            if wanted is None:
                return True  # a fault: from any kind, says nothing of the device's own
            if session is None:
                session = self.device_seqs.sessions.get(device)
            if learns(learnt, session):
                self.dev_kind = {**self.dev_kind, device: Learnt(session, wanted)}
                return True
            kind = learnt.kind  # type: ignore[union-attr]  # (learns() is true without one)
        if wanted == kind or wanted is None:
            return True
        self._refuse(
            received,
            f"{device}#kind",
            f"Device {{device}} sent events a {KIND_NAMES.get(kind, kind)} does not send "
            f"({event.type}): {{count}} were ignored, none taken as evidence.",
        )
        return False

    def _refuse(
        self, received: DeviceEventReceived | DeviceStatusReceived, key: str, text: str
    ) -> None:
        """One ``bad_payload`` per key, counting the messages refused (``text`` names them:
        ``{count}``, ``{device}``; updated at most once a second); timed like a rejected
        payload, by the shell's clock."""
        self.ts = received.received
        self.clock = max(self.clock, self.ts)
        count = self.refused.get(key, 0) + 1
        self.refused = {**self.refused, key: count}
        device = bounded(received.device, 64)
        message = text.format(count=count, device=device)
        existing = self.book.find("bad_payload", key)
        if existing is None:
            self._raise("bad_payload", message, scope="hand", key=key, device=device)
        elif self.ts - self.book.active[existing].ts >= REPORT_EVERY:
            self.book.update(existing, self.ts, message=message, device=device)

    def _input_seq(self, item: KeyInput | ActionInput) -> None:
        """A dealer input's ``seq`` (per source): inputs missing in between were lost on the
        way, and no one can send them again: told at once, the hand's result marked."""
        seq = item.seq
        if seq is None:
            return
        source = item.source or ""
        high = self.input_seq.get(source)
        if high is not None and seq <= high and seq != 1:
            return  # a repeat, or a late one: taken as before
        self.input_seq = {**self.input_seq, source: seq}
        if high is None or seq <= high or seq == high + 1:
            return  # the first one seen, a sender restarted at 1, or the next one
        sender = f" from {bounded(source, 64)}" if source else ""
        if seq - high - 1 > SEQ_AHEAD:
            what = f"Dealer inputs{sender} jumped from {high} to {seq}"
        elif seq - high == 2:
            what = f"Dealer input {high + 1}{sender} was lost on the way"
        else:
            what = f"Dealer inputs {high + 1} to {seq - 1}{sender} were lost on the way"
        message = f"{what}: keys or actions may be missing from this hand."
        key = f"input#{source}"
        existing = self.book.find("device_fault", key)
        remedy = ("Check the last keys and actions entered; enter again those that mattered.",)
        if existing is None:
            self._raise("device_fault", message, scope="hand", key=key, remedy=remedy)
        else:
            self.book.update(existing, self.ts, message=message)
        self.evidence_missing = True

    def _button(self, seat: int | None) -> None:
        self.button_known = True
        self.button = seat
        remedy = self.button_r
        if remedy is not None and seat == remedy.expected:
            self.book.resolve(remedy.alert, self.ts)
            self.button_r = None
        late = self.late_button
        if (
            late is not None
            and seat is not None
            and seat == self.expected_button
            and self.phase in ("dealing", "preflop")
            and not (self.settings.action_feed and self._window_closed())
        ):
            # TDA 34-A: corrected before substantial action; the next hand moves on from here
            self.book.resolve(late, self.ts)
            self.late_button = None
            self.hand_button = seat
            self.anchor = (seat, True)

    def _blind_posted(self, seat: int) -> None:
        kept = []
        for remedy in self.blinds_r:
            if remedy.seat == seat:
                self.book.resolve(remedy.alert, self.ts)
            else:
                kept.append(remedy)
        self.blinds_r = tuple(kept)

    def _forget_deck(self, deck: str) -> None:
        """A deck was reshuffled: its cards left over from a hand over (or void) are in it now."""
        registry = self.settings.registry
        for uid, zone in list(self.zone.items()):
            card = registry.lookup(uid)
            if card is not None and card.deck == deck:
                self._leave(uid, zone)
                self._cards_change()
                del self.zone[uid]

    def _other_deck(self, deck: str | None) -> str | None:
        others = [d for d in self.settings.registry.decks if d != deck]
        return others[0] if len(others) == 1 else None

    def _shuffle_complete(self, device: str, event: ShuffleCompleteEvent) -> None:
        self.shuffler_known = True
        deck = event.deck
        if deck is not None and deck not in self.settings.registry.decks:
            # not a deck of this table: nothing to mark (and no name from a payload to keep)
            if event.ok:
                return
            self._raise(
                "deck_check_failed",
                f"The deck check of a deck not in the registry failed (count {event.count}): "
                "do not deal it.",
                scope="deck",
                device=device,
            )
            return
        if deck is None:
            # The shuffler cannot name the deck: it is the one not in play (decks alternate).
            current = self.hand_deck if self.running else self.last_deck
            deck = self._other_deck(current) if current is not None else None
        if event.ok:
            if deck is not None:
                self.decks = {**self.decks, deck: "ready"}
                self.book.resolve_scope("deck", self.ts, deck)
                if not self.running:
                    self._forget_deck(deck)
            if self.phase == "idle":
                self.phase = "shuffled"
            return
        if deck is not None:
            self.decks = {**self.decks, deck: "blocked"}
        # Counts only: card names could be hole cards of the deck in play (secrecy).
        parts = [f"count {event.count}"]
        if event.missing:
            parts.append(f"{len(event.missing)} missing")
        if event.duplicates:
            parts.append(f"{len(event.duplicates)} duplicated")
        name = f"deck {deck}" if deck is not None else "the deck"
        message = f"The deck check of {name} failed ({', '.join(parts)}): do not deal it."
        self._raise("deck_check_failed", message, scope="deck", key=deck, device=device)
