"""A full disk under ``tablectl run`` behind a **stock** mosquitto (20 unacknowledged messages in
flight): the dealer keeps getting alerts (issue 20, point 6).

The journal's directory is a small tmpfs that the test fills (ENOSPC, as on a table PC). The
service holds the records it cannot write in a bounded tail in memory and acknowledges their
messages, so the broker keeps delivering; it says so (status ``fault`` with the reason, one
``journal_fault`` alert with the count not yet on disk); once the disk has room it writes the
tail, and the ``outage`` record names exactly the records acknowledged before they were durable.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from contract.models import FaultEvent, Status
from controller.journal import read_journal
from testing.mosquitto import running_mosquitto
from testing.small_disk import fill, small_disk
from tests.service.conftest import StartService
from tests.service.support import TABLECTL, Probe, probe, until, write_config

#: More than the 20 a stock mosquitto lets go unacknowledged.
ROUNDS = 30


async def fault_to_its_alert(p: Probe, device: str, seq: int, mark: int) -> int:
    """Publish a device fault and wait for its alert; the probe's new mark."""
    event = FaultEvent(seq=seq, ts=datetime.now(UTC), code="jam", text="full")
    await p.publish(p.topics.device_event(device), event.to_json())
    await p.alert("device_fault", after=mark)
    return len(p.messages)


def verify(config: Path) -> subprocess.CompletedProcess[str]:
    """``tablectl journal verify`` on the table's journal (the service is done with it)."""
    return subprocess.run(
        [str(TABLECTL), "journal", "verify", "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )


async def test_disk_full_behind_a_stock_broker_alerts_go_on_and_the_tail_is_written_later(
    tmp_path: Path, start_service: StartService
) -> None:
    with (
        running_mosquitto(tmp_path, stock=True) as broker,
        small_disk(tmp_path / "disk", 2 << 20) as disk,
    ):
        config = write_config(disk, broker.url, journal="backlog = 1000\n")
        journal = disk / "journal.jsonl"
        service = start_service(config)
        try:
            async with probe(broker.port, "t1") as p:
                await p.status("online")
                filler = fill(disk)  # the disk is full
                mark = len(p.messages)
                for round_ in range(1, ROUNDS + 1):
                    device = f"dev-{round_ % 5}"
                    seq = (round_ - 1) // 5 + 1  # each device's own seqs, without gaps
                    mark = await fault_to_its_alert(p, device, seq, mark)
                    online = Status(state="online", ts=datetime.now(UTC), session=1)
                    await p.publish(p.topics.device_status(device), online.to_json(), retain=True)
                    await p.alert("device_fault", status="resolved", after=mark)
                    mark = len(p.messages)
                # Every alert came, well past the broker's window of 20.
                faults = [a for a in p.alerts() if a.code == "device_fault" and a.status == "raised"]
                assert len(faults) == ROUNDS, [(a.id, a.device, a.ts.time()) for a in faults]
                fault = await p.status("fault")
                assert fault.detail == f"journal {journal}: No space left on device"
                journal_alerts = [a for a in p.alerts() if a.code == "journal_fault"]
                assert journal_alerts[0].status == "raised"
                assert "records are not yet on disk" in journal_alerts[0].message
                assert [a.status for a in journal_alerts].count("raised") == 1

                filler.unlink()  # room again
                mark = len(p.messages)
                await p.status("online", after=mark)
                await p.alert("journal_fault", status="resolved")
            contents = read_journal(journal)
            # Every message of the outage is in the journal, written late.
            assert contents.received_count == 2 * ROUNDS
            (outage,) = contents.outages
            assert outage.lost == 0
            assert outage.late > 0
            early = outage.acknowledged_early
            assert early, "the outage record names what was acknowledged early"
            early_numbers = {n for first, last in early for n in range(first, last + 1)}
            received = [r.n for r in contents.received]
            # All but the messages that came while the disk was being written again.
            assert len(early_numbers & set(received)) >= 2 * ROUNDS - 2, (early, received)
            assert early_numbers <= set(received) | set(range(early[0][0], early[-1][1] + 1))
            assert all(first <= last for first, last in early)
            checked = verify(config)  # the service is done with the journal
            assert checked.returncode == 0, checked.stdout + checked.stderr
        finally:
            service.stop()
        await until(lambda: not service.running(), what="the service stopped")


async def test_a_controller_killed_during_the_outage_leaves_the_span_it_acknowledged_named(
    tmp_path: Path, start_service: StartService
) -> None:
    with (
        running_mosquitto(tmp_path, stock=True) as broker,
        small_disk(tmp_path / "disk", 2 << 20) as disk,
    ):
        config = write_config(disk, broker.url, journal="backlog = 1000\n")
        journal = disk / "journal.jsonl"
        service = start_service(config)
        try:
            async with probe(broker.port, "t1") as p:
                await p.status("online")
                filler = fill(disk)
                mark = len(p.messages)
                # A page of the journal may still have room: publish until the fault shows,
                # then three more, each to its alert (acknowledged while held in memory).
                seq = 0
                status = p.topics.controller_status
                while not [m for m in p.messages if m.topic == status and b'"fault"' in m.payload]:
                    seq += 1
                    mark = await fault_to_its_alert(p, f"dev-{seq}", seq, mark)
                for _ in range(3):
                    seq += 1
                    mark = await fault_to_its_alert(p, f"dev-{seq}", seq, mark)
                service.kill()  # dies holding what it acknowledged
                filler.unlink()
                restarted = start_service(config)
                await p.status("online", after=mark)
            contents = read_journal(journal)
            # (a record the full disk tore may be declared lost by an outage record of its own)
            (outage,) = [o for o in contents.outages if o.acknowledged_early]
            assert outage.lost >= 3
            assert outage.acknowledged_early
            early = {n for first, last in outage.acknowledged_early for n in range(first, last + 1)}
            assert len(early) >= 3
            assert not early & {r.n for r in contents.received}  # none of them reached the disk
            assert outage.lost_from is not None
            assert outage.lost_to is not None
            assert early <= set(range(outage.lost_from, outage.lost_to + 1))
            checked = verify(config)  # the service is done with the journal
            assert checked.returncode == 2, checked.stdout + checked.stderr  # intact, loss declared
            assert f"records {outage.lost_from} to {outage.lost_to} LOST" in checked.stdout
        finally:
            for process in (service, restarted):
                process.stop()
