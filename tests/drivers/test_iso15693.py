"""The ISO 15693 anti-collision model: every tag found once, in the time the air interface needs."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.framing import FrameError
from drivers.rfid.protocol import CODEC, MAX_PAYLOAD, MAX_READS_PER_FRAME, InventoryPage, TagRead
from simulators.iso15693 import (
    EMPTY_SLOT_S,
    OCCUPIED_SLOT_S,
    READER_EOF_S,
    SLOTS,
    inventory,
    request_s,
)


def random_uids(count: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    return [f"E007{rng.getrandbits(48):012X}" for _ in range(count)]


def test_an_empty_antenna_is_one_request_and_sixteen_silent_slots() -> None:
    run = inventory([])
    assert run.found == ()
    expected = request_s(0) + (SLOTS - 1) * READER_EOF_S + SLOTS * EMPTY_SLOT_S
    assert run.duration_s == pytest.approx(expected)
    assert run.duration_s == pytest.approx(0.0098, abs=0.0002)


def test_one_card_takes_one_answered_slot_more() -> None:
    run = inventory(["E0040150654CC41C"])
    assert [uid for _, uid in run.found] == ["E0040150654CC41C"]
    expected = inventory([]).duration_s - EMPTY_SLOT_S + OCCUPIED_SLOT_S
    assert run.duration_s == pytest.approx(expected)
    assert pytest.approx(0.0046, abs=0.0001) == OCCUPIED_SLOT_S


def test_a_collision_is_resolved_with_a_longer_mask() -> None:
    # Same low nibble (slot 5 of the first round), different next nibble: one collided slot,
    # then a second request with a 4-bit mask finds both.
    uids = ["E0070000000000A5", "E0070000000000B5"]
    run = inventory(uids)
    assert sorted(uid for _, uid in run.found) == sorted(uids)
    expected = (
        request_s(0)
        + request_s(4)
        + 2 * (SLOTS - 1) * READER_EOF_S
        + 3 * OCCUPIED_SLOT_S
        + (2 * SLOTS - 3) * EMPTY_SLOT_S
    )
    assert run.duration_s == pytest.approx(expected)


@pytest.mark.parametrize(("count", "low", "high"), [(200, 1.6, 2.1), (300, 2.5, 3.2)])
def test_a_pot_of_chips_takes_about_nine_ms_per_tag(count: int, low: float, high: float) -> None:
    # The figure docs/protocols/rfid.md assumes: about 9 ms per tag (some 110 tags/s).
    run = inventory(random_uids(count))
    assert low < run.duration_s < high
    assert 0.008 < run.duration_s / count < 0.0105


@given(st.lists(st.binary(min_size=8, max_size=8), max_size=120, unique=True))
@settings(max_examples=60, deadline=None)
def test_every_tag_is_found_exactly_once_in_time_order(raw: list[bytes]) -> None:
    uids = [value.hex().upper() for value in raw]
    run = inventory(uids)
    assert sorted(uid for _, uid in run.found) == sorted(uids)
    times = [t for t, _ in run.found]
    assert times == sorted(times)
    assert all(0 < t <= run.duration_s for t in times)


def test_uids_alike_up_to_their_last_nibbles_are_still_told_apart() -> None:
    uids = ["0000000000000001", "1000000000000001", "E00401500000000A", "F00401500000000A"]
    assert sorted(uid for _, uid in inventory(uids).found) == sorted(uids)


def test_a_full_page_of_the_longest_uids_fits_one_frame() -> None:
    reads = tuple(TagRead(f"{n:020X}", -45) for n in range(MAX_READS_PER_FRAME))
    page = InventoryPage(24, 7, 0, False, reads)
    assert len(page.payload()) <= MAX_PAYLOAD
    assert CODEC.from_bytes(CODEC.encode(1, page)).message == page
    with pytest.raises(ValueError, match="at most 255 reads"):
        InventoryPage(24, 7, 0, False, (*reads, reads[0])).payload()
    with pytest.raises(FrameError, match="last must be 0 or 1"):
        InventoryPage.from_payload(bytes([24, 7, 0, 2, 0]))
