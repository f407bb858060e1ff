"""Sensor board figures: codec speed, and key press -> MQTT ``key`` event latency end to end.

Run from the repository root: ``.venv/bin/python -m benchmarks.bench_sensors`` (needs mosquitto).
The end-to-end part runs the real driver against the simulated board, once through the in-process
pyusb backend and once through the unix-socket backend (the board in "another process" mode).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import aiomqtt

from config.models import MqttSection, SensorBoardDevice
from contract.models import KeyEvent, parse_event
from contract.topics import Topics
from drivers.driver import DriverOptions, stop_task
from drivers.sensors.driver import sensor_board_driver
from drivers.sensors.protocol import CODEC, InputReport, KeyPress
from simulators.sensors import SensorBoardSimulator
from testing.mosquitto import running_mosquitto

VID, PID = 0x1209, 0x7AB1


def bench_codec(rounds: int) -> None:
    report = InputReport(
        button=3,
        blinds=frozenset({4, 5}),
        occupied=frozenset(range(1, 10)),
        keys=tuple(KeyPress(n, "round_complete") for n in range(4)),
    )
    started = time.perf_counter()
    for _ in range(rounds):
        data = CODEC.encode(1, report)
    encode_s = time.perf_counter() - started
    decoder = CODEC.stream()
    started = time.perf_counter()
    for _ in range(rounds):
        decoder.feed_transfer(data)
    decode_s = time.perf_counter() - started
    print(f"codec: encode {rounds / encode_s:,.0f} reports/s, decode {rounds / decode_s:,.0f} reports/s")
    print(f"       ({len(data)} bytes per report; the board sends at most ~1000 reports/s at bInterval 1 ms)")


async def bench_latency(presses: int, remote: bool) -> None:
    board = SensorBoardSimulator(VID, PID)
    with tempfile.TemporaryDirectory() as tmp, running_mosquitto(Path(tmp)) as broker:
        fields: dict[str, object] = {
            "id": "sensors",
            "driver": "sensors",
            "vendor_id": VID,
            "product_id": PID,
        }
        if remote:
            fields["backend"] = board.serve(Path(tmp) / "board.sock")
        device = SensorBoardDevice.model_validate(fields)
        topics = Topics("holdem", "bench")
        driver = sensor_board_driver(
            device,
            MqttSection(url=broker.url),
            topics,
            DriverOptions(),
            usb_backend=None if remote else board.backend,
        )
        events = topics.device_event("sensors")
        task = asyncio.create_task(driver.run())
        latencies: list[float] = []
        try:
            async with aiomqtt.Client("127.0.0.1", broker.port) as client:
                await client.subscribe(events, qos=1)
                await asyncio.wait_for(driver.broker_ready.wait(), 10)
                while not driver.online:  # noqa: ASYNC110 - the base exposes no event for it
                    await asyncio.sleep(0.01)
                for _ in range(presses):
                    started = time.perf_counter()
                    board.press("round_complete")
                    while True:
                        message = await asyncio.wait_for(anext(client.messages), 5)
                        payload = message.payload
                        assert isinstance(payload, bytes)
                        if isinstance(parse_event(events, payload), KeyEvent):
                            break
                    latencies.append((time.perf_counter() - started) * 1000)
        finally:
            await stop_task(task)
            await board.close()
    latencies.sort()
    mode = "unix-socket backend" if remote else "in-process backend"
    print(
        f"key press -> MQTT key event ({mode}, poll_ms={device.poll_ms}, {presses} presses): "
        f"median {statistics.median(latencies):.2f} ms, "
        f"p95 {latencies[int(len(latencies) * 0.95) - 1]:.2f} ms, max {latencies[-1]:.2f} ms"
    )


async def bench_idle_cpu(poll_ms: int, seconds: float) -> None:
    """CPU time the driver (and the in-process board) take while nothing happens at the table."""
    board = SensorBoardSimulator(VID, PID)
    with tempfile.TemporaryDirectory() as tmp, running_mosquitto(Path(tmp)) as broker:
        device = SensorBoardDevice(
            id="sensors", driver="sensors", vendor_id=VID, product_id=PID, poll_ms=poll_ms
        )
        driver = sensor_board_driver(
            device, MqttSection(url=broker.url), Topics("holdem", "idle"), usb_backend=board.backend
        )
        task = asyncio.create_task(driver.run())
        try:
            await asyncio.wait_for(driver.broker_ready.wait(), 10)
            await asyncio.sleep(1.0)
            cpu, wall = time.process_time(), time.perf_counter()
            await asyncio.sleep(seconds)
            share = (time.process_time() - cpu) / (time.perf_counter() - wall) * 100
        finally:
            await stop_task(task)
    print(f"idle CPU with poll_ms={poll_ms}: {share:.1f} % of one core")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=50_000, help="codec rounds")
    parser.add_argument("--presses", type=int, default=200, help="key presses per latency run")
    args = parser.parse_args()
    bench_codec(args.rounds)
    asyncio.run(bench_latency(args.presses, remote=False))
    asyncio.run(bench_latency(args.presses, remote=True))
    for poll_ms in (2, 10, 50):
        asyncio.run(bench_idle_cpu(poll_ms, 3.0))


if __name__ == "__main__":
    main()
