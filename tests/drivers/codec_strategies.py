"""Hypothesis strategies for every message of the serial protocols."""

from __future__ import annotations

from hypothesis import strategies as st

from contract.cards import ALL_CARDS
from drivers.framing import Message
from drivers.rfid import protocol as rfid
from drivers.shuffler import protocol as shuffler

u8 = st.integers(0, 255)
labels = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=16)
cards = st.lists(st.sampled_from(ALL_CARDS), max_size=52).map(tuple)
antennas = st.lists(st.integers(1, 255), min_size=1, max_size=32).map(tuple)
uids = st.binary(min_size=4, max_size=10).map(lambda b: b.hex().upper())
reads = st.builds(rfid.TagRead, uids, st.integers(-128, 127), st.sampled_from(list(rfid.Orientation)))

shuffler_messages: st.SearchStrategy[Message] = st.one_of(
    st.just(shuffler.GetStatus()),
    st.builds(shuffler.StartShuffle, labels),
    st.builds(
        shuffler.StatusReport,
        st.sampled_from(list(shuffler.MachineState)),
        st.booleans(),
        st.booleans(),
        st.booleans(),
        u8,
    ),
    st.builds(shuffler.Shuffling, labels),
    st.builds(shuffler.ShuffleComplete, labels, u8, st.booleans(), cards, cards),
    st.builds(shuffler.Fault, st.sampled_from(list(shuffler.FaultCode)), st.booleans()),
    st.builds(shuffler.Heartbeat, st.integers(0, 2**32 - 1)),
    st.builds(shuffler.Ack, u8),
    st.builds(shuffler.Nak, u8, st.sampled_from(list(shuffler.NakReason))),
)

rfid_messages: st.SearchStrategy[Message] = st.one_of(
    st.just(rfid.GetInfo()),
    st.builds(rfid.SetSweep, st.integers(1, 65535), antennas),
    st.builds(rfid.Info, u8, st.integers(0, 65535), antennas),
    st.builds(rfid.Inventory, st.integers(1, 255), u8, st.lists(reads, max_size=40).map(tuple)),
    st.builds(rfid.Heartbeat, st.integers(0, 2**32 - 1)),
    st.builds(rfid.ReaderError, st.sampled_from(list(rfid.ReaderErrorCode)), u8),
    st.builds(rfid.Ack, u8),
    st.builds(rfid.Nak, u8, st.sampled_from(list(rfid.NakReason))),
    st.builds(
        rfid.InventoryPage,
        st.integers(1, 255),
        u8,
        u8,
        st.booleans(),
        st.lists(reads, max_size=40).map(tuple),
    ),
)
