"""How long an ISO/IEC 15693 reader takes to inventory the tags on one antenna; pure.

The reader's anti-collision is the standard's 16-slot inventory (ISO/IEC 15693-3, high data
rate, one subcarrier, 1-out-of-4 coding). An Inventory request with a mask of ``m`` bits wakes the
tags whose UID ends in those bits; each answers in the slot numbered by its next four UID bits.
A slot is empty (nobody answered), holds one answer (that tag is identified), or a collision (two
or more answered: the reader reads a frame with a bad CRC); each collided slot is inventoried
again later with the mask four bits longer, until every tag was alone in a slot. The time comes
from the air interface's figures:

- one bit either way lasts 512/fc = 37.76 µs (26.48 kbit/s reader to tag, 26.69 kbit/s back);
- a request is SOF + flags, command, mask length, mask bytes, CRC-16 + EOF; an answer is
  SOF + flags, DSFID, 64-bit UID, CRC-16 + EOF (96 bits between SOF and EOF of 151 µs each);
- a tag answers t1 = 4352/fc = 320.9 µs after the reader's EOF; the reader waits t2 = 4192/fc
  = 309.2 µs after an answer, and t3 = t1max + SOF = 474.4 µs in a silent slot, before the EOF
  that opens the next slot;
- a collision costs a whole answer (the reader finds out at the CRC).

That makes about 4.6 ms per occupied slot and 0.5 ms per empty one, 9.8 ms for an antenna with no
tag, 14 ms for one card, and about 9 ms per tag (110 tags/s) for tens to hundreds of tags: 1.8 s
for 200 chips, 2.8 s for 300. docs/protocols/rfid.md cites the sources and compares vendors.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

FC_HZ: Final = 13.56e6
BIT_S: Final = 512 / FC_HZ
#: Reader SOF (1-out-of-4) and EOF; tag SOF and EOF at the high data rate.
READER_SOF_S: Final = 2 * BIT_S
READER_EOF_S: Final = BIT_S
TAG_SOF_S: Final = 4 * BIT_S
TAG_EOF_S: Final = 4 * BIT_S
T1_S: Final = 4352 / FC_HZ
T1_MAX_S: Final = 4384 / FC_HZ
T2_S: Final = 4192 / FC_HZ
T3_S: Final = T1_MAX_S + TAG_SOF_S
#: flags, DSFID, UID (64 bits), CRC-16.
ANSWER_BITS: Final = 8 + 8 + 64 + 16
ANSWER_S: Final = TAG_SOF_S + ANSWER_BITS * BIT_S + TAG_EOF_S
SLOTS: Final = 16
SLOT_BITS: Final = 4
#: ISO 15693 UIDs have 64 bits; the reader protocol allows up to 10 bytes, so masks may grow to 80.
UID_BITS: Final = 80


def request_s(mask_bits: int) -> float:
    """An Inventory request with a mask of ``mask_bits`` bits, on the air."""
    # flags, command, mask length, the mask padded to whole bytes, CRC-16.
    bits = 8 + 8 + 8 + 8 * ((mask_bits + 7) // 8) + 16
    return READER_SOF_S + bits * BIT_S + READER_EOF_S


#: A slot somebody answered in (alone or not), and a silent slot.
OCCUPIED_SLOT_S: Final = T1_S + ANSWER_S + T2_S
EMPTY_SLOT_S: Final = T3_S


@dataclass(frozen=True, slots=True)
class InventoryRun:
    """One inventory of an antenna: when each tag was identified, and how long it all took."""

    #: (seconds from the start of the inventory, UID), in the order the reader found them.
    found: tuple[tuple[float, str], ...]
    duration_s: float


def inventory(uids: Iterable[str]) -> InventoryRun:
    """Run the 16-slot anti-collision over the tags ``uids`` (hex UIDs, most significant first)."""
    tags = {int(uid, 16): uid.upper() for uid in uids}
    found: list[tuple[float, str]] = []
    now = 0.0
    # Masks still to inventory (bits, value), last in first out: a collided slot is resolved
    # before the reader moves on, as in ISO/IEC 15693-3's example sequence.
    pending: list[tuple[int, int]] = [(0, 0)]
    while pending:
        bits, mask = pending.pop()
        now += request_s(bits)
        low = (1 << bits) - 1
        slots: dict[int, list[int]] = {}
        for value in tags:
            if value & low == mask:
                slots.setdefault((value >> bits) & (SLOTS - 1), []).append(value)
        collided: list[tuple[int, int]] = []
        for slot in range(SLOTS):
            if slot:
                now += READER_EOF_S  # the EOF that opens the next slot
            answering = slots.get(slot, [])
            if not answering:
                now += EMPTY_SLOT_S
                continue
            now += OCCUPIED_SLOT_S
            if len(answering) == 1:
                found.append((now, tags[answering[0]]))
            elif bits + SLOT_BITS < UID_BITS:
                collided.append((bits + SLOT_BITS, mask | (slot << bits)))
            # Beyond the last mask bit two answers would be the same UID: UIDs are unique.
        pending.extend(reversed(collided))
    return InventoryRun(tuple(found), now)
