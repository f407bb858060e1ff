"""The simulated sensor board through pyusb itself: enumeration, transfers, unplug, key queue, socket."""

from __future__ import annotations

import asyncio
import errno
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import usb.core
import usb.util

from config.models import SensorBoardDevice
from drivers.framing import Frame
from drivers.sensors.protocol import CODEC, BuzzerReport, InputReport, KeyAck, LampReport
from drivers.transport.usb_sim import backend_from_spec
from simulators import sensors_ctl
from simulators.sensors import Lamp, SensorBoardSimulator

VID, PID = 0x1209, 0x7AB1


def find(backend: Any) -> Any:
    return usb.core.find(idVendor=VID, idProduct=PID, backend=backend)


def read_frame(dev: Any, timeout_ms: int = 500) -> Frame:
    frames = CODEC.stream().feed_transfer(bytes(dev.read(0x81, 64, timeout_ms)))
    assert len(frames) == 1
    assert isinstance(frames[0].message, InputReport)
    return frames[0]


def read_report(dev: Any, timeout_ms: int = 500) -> InputReport:
    report = read_frame(dev, timeout_ms).message
    assert isinstance(report, InputReport)
    return report


@pytest.fixture
def board() -> SensorBoardSimulator:
    return SensorBoardSimulator(VID, PID, serial_number="SB-7", idle_ms=100, resend_ms=30)


def test_pyusb_finds_the_board_with_its_descriptors(board: SensorBoardSimulator) -> None:
    dev = find(board.backend)
    assert dev is not None
    assert (dev.idVendor, dev.idProduct) == (VID, PID)
    assert dev.serial_number == "SB-7"
    assert "sensor board" in dev.product
    assert usb.core.find(idVendor=VID, idProduct=PID + 1, backend=board.backend) is None
    dev.set_configuration()
    interface = dev.get_active_configuration()[(0, 0)]
    endpoints = {ep.bEndpointAddress: ep for ep in interface}
    assert set(endpoints) == {0x81, 0x02}
    assert all(
        usb.util.endpoint_type(ep.bmAttributes) == usb.util.ENDPOINT_TYPE_INTR for ep in endpoints.values()
    )


def test_reports_carry_the_state_and_the_board_idles_between_changes(
    board: SensorBoardSimulator,
) -> None:
    dev = find(board.backend)
    first = read_frame(dev)
    assert isinstance(first.message, InputReport)
    assert (first.message.button, first.message.occupied) == (None, frozenset())
    started = time.monotonic()
    heartbeat = read_frame(dev)  # nothing changed: it comes after the idle period
    assert time.monotonic() - started >= 0.08
    assert heartbeat.seq == (first.seq + 1) & 0xFF
    with pytest.raises(usb.core.USBTimeoutError):
        dev.read(0x81, 64, 20)
    board.move_button(7)
    board.set_occupied(3, True)
    board.set_blind(3, True)
    report = read_report(dev, 20)  # a change is reported at once
    assert (report.button, report.occupied, report.blinds) == (7, frozenset({3}), frozenset({3}))


def test_output_reports_set_lamp_and_buzzer(board: SensorBoardSimulator) -> None:
    dev = find(board.backend)
    data = CODEC.encode(1, LampReport("blue", blink=True))
    assert dev.write(0x02, data) == len(data)
    assert board.lamp == Lamp("blue", True)
    dev.write(0x02, CODEC.encode(2, BuzzerReport(2000)))
    assert board.buzzer_active
    report = read_report(dev)
    assert (report.lamp, report.blink, report.buzzer) == ("blue", True, True)
    dev.write(0x02, CODEC.encode(3, BuzzerReport(0)))
    assert not board.buzzer_active
    dev.write(0x02, b"\xa5\x5a\x81\x04\x02\x01\x00\x00\x00")  # bad CRC: ignored by the board
    assert board.lamp == Lamp("blue", True)


def test_key_presses_wait_until_acknowledged(board: SensorBoardSimulator) -> None:
    dev = find(board.backend)
    read_report(dev)
    for key in ("new_hand", "all_in", "ack"):
        board.press(key, 2 if key == "all_in" else None)
    report = read_report(dev, 20)
    assert [(k.number, k.key, k.seat) for k in report.keys] == [
        (1, "new_hand", None),
        (2, "all_in", 2),
        (3, "ack", None),
    ]
    resent = read_report(dev, 200)  # not acknowledged: sent again
    assert resent.keys == report.keys
    dev.write(0x02, CODEC.encode(1, KeyAck(2)))
    assert board.pending_keys == 1
    assert [k.number for k in read_report(dev, 200).keys] == [3]
    dev.write(0x02, CODEC.encode(2, KeyAck(3)))
    assert board.pending_keys == 0


def test_more_presses_than_a_report_holds_and_queue_overflow(board: SensorBoardSimulator) -> None:
    small = SensorBoardSimulator(VID, PID, key_queue=10)
    dev = find(small.backend)
    read_report(dev)
    for _ in range(11):
        small.press("round_complete")
    report = read_report(dev, 20)
    assert len(report.keys) == 8
    assert report.key_overflow
    dev.write(0x02, CODEC.encode(1, KeyAck(report.keys[-1].number)))
    rest = read_report(dev, 200)
    assert [k.number for k in rest.keys] == [9, 10]
    assert not rest.key_overflow
    with pytest.raises(ValueError, match="unknown key"):
        small.press("fold")
    with pytest.raises(ValueError, match="seat 11"):
        small.press("exposed", 11)


def test_presses_beyond_a_report_wait_for_the_ack_not_flood_the_host() -> None:
    # 20 presses, 8 per report: the 12 that do not fit make no report due; the first 8 are
    # resent every resend_ms. A board resending at once would bury a slow host in copies.
    slow = SensorBoardSimulator(VID, PID, resend_ms=1000)
    dev = find(slow.backend)
    read_report(dev)
    for _ in range(20):
        slow.press("round_complete")
    first = read_report(dev, 20)
    assert [k.number for k in first.keys] == list(range(1, 9))
    with pytest.raises(usb.core.USBTimeoutError):
        read_report(dev, 100)  # not resent before resend_ms, though 12 presses wait
    dev.write(0x02, CODEC.encode(1, KeyAck(8)))
    assert [k.number for k in read_report(dev, 100).keys] == list(range(9, 17))  # room: at once


def test_unplug_fails_transfers_and_replug_enumerates_afresh(board: SensorBoardSimulator) -> None:
    dev = find(board.backend)
    dev.write(0x02, CODEC.encode(1, LampReport("red")))
    board.move_button(5)
    read_report(dev)
    board.unplug()
    with pytest.raises(usb.core.USBError) as caught:
        dev.read(0x81, 64, 50)
    assert caught.value.errno == errno.ENODEV
    assert find(board.backend) is None
    board.press("ack")  # no power: goes nowhere
    board.replug()
    with pytest.raises(usb.core.USBError):
        dev.read(0x81, 64, 50)  # the old handle belongs to the old plug-in
    fresh = find(board.backend)
    assert fresh.address != dev.address
    report = read_report(fresh)
    assert report.button == 5  # the button did not move
    assert report.lamp == "off"  # the board lost power
    assert report.keys == ()
    assert board.lamp == Lamp()


def test_corrupt_reports_are_damaged_on_the_wire_then_resent(board: SensorBoardSimulator) -> None:
    dev = find(board.backend)
    read_report(dev)
    board.corrupt_reports(1)
    board.press("misdeal")
    decoder = CODEC.stream()
    assert decoder.feed_transfer(bytes(dev.read(0x81, 64, 50))) == []
    assert len(decoder.drain_errors()) == 1
    assert [k.key for k in read_report(dev, 50).keys] == ["misdeal"]


@pytest.fixture
def served(board: SensorBoardSimulator, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    path = tmp_path / "board.sock"
    spec = board.serve(path)
    yield spec, path
    asyncio.run(board.close())


def test_the_board_is_reachable_from_another_process_by_socket(
    board: SensorBoardSimulator, served: tuple[str, Path]
) -> None:
    spec, path = served
    assert spec == f"sim:{path}"
    backend = backend_from_spec(spec)
    dev = find(backend)
    assert dev.serial_number == "SB-7"
    board.press("declare_board", 6)
    report = read_report(dev, 200)
    assert [(k.key, k.seat) for k in report.keys] == [("declare_board", 6)]
    dev.write(0x02, CODEC.encode(1, LampReport("white")))
    assert board.lamp == Lamp("white")
    assert read_report(dev, 200).lamp == "white"
    with pytest.raises(usb.core.USBTimeoutError):
        dev.read(0x81, 64, 10)
    board.unplug()
    with pytest.raises(usb.core.USBError) as caught:
        dev.read(0x81, 64, 50)
    assert caught.value.errno == errno.ENODEV
    assert find(backend) is None


def test_socket_server_answers_bad_requests_with_an_error(served: tuple[str, Path]) -> None:
    _, path = served
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        sock.connect(str(path))
        reader = sock.makefile("rb")
        for line in (b"not json\n", b"[1]\n", b'{"op": "fly"}\n', b'{"op": "read"}\n'):
            sock.sendall(line)
            answer = json.loads(reader.readline())
            assert answer["ok"] is False
            assert "bad request" in answer["error"]


def test_a_closed_simulator_looks_unplugged(tmp_path: Path) -> None:
    backend = backend_from_spec(f"sim:{tmp_path / 'nobody.sock'}")
    assert find(backend) is None
    with pytest.raises(ValueError, match="sim:"):
        backend_from_spec("libusb")


async def test_a_board_for_a_configured_device_is_found_where_the_config_points(
    tmp_path: Path,
) -> None:
    device = SensorBoardDevice(
        id="board-2", driver="sensors", vendor_id=0x1234, product_id=0x0042, serial_number="X9"
    )
    board = SensorBoardSimulator.for_device(device)
    pointed = board.serve_for(device, tmp_path)
    try:
        assert pointed.backend == f"sim:{tmp_path / 'board-2.sock'}"
        assert pointed.id == device.id
        dev = usb.core.find(idVendor=0x1234, idProduct=0x0042, backend=backend_from_spec(pointed.backend))
        assert dev.serial_number == "X9"
    finally:
        await board.close()


def test_a_served_board_is_operated_from_a_shell(
    board: SensorBoardSimulator, served: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, path = served
    assert sensors_ctl.main([str(path), "button", "4"]) == 0
    assert sensors_ctl.main([str(path), "seat", "2", "on"]) == 0
    assert sensors_ctl.main([str(path), "blind", "2", "on"]) == 0
    assert sensors_ctl.main([str(path), "press", "exposed", "2"]) == 0
    capsys.readouterr()
    assert sensors_ctl.main([str(path), "state"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["button"] == 4
    assert state["occupied"] == [2]
    assert state["blinds"] == [2]
    assert state["pending_keys"] == 1
    report = read_report(find(board.backend))
    assert [(k.key, k.seat) for k in report.keys] == [("exposed", 2)]
    assert sensors_ctl.main([str(path), "unplug"]) == 0
    assert not board.plugged
    assert sensors_ctl.main([str(path), "replug"]) == 0
    assert board.plugged
    for bad in (["press", "fold"], ["seat", "11", "on"], ["seat", "2", "maybe"], ["dance"]):
        assert sensors_ctl.main([str(path), *bad]) == 1
        assert "bad request" in capsys.readouterr().err
    assert sensors_ctl.main([str(path.with_name("nobody.sock")), "state"]) == 1
