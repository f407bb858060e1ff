"""Checkpoints: the controller's state after a received record, as bytes, and back.

A checkpoint is compressed JSON of plain data (``engine.state_data``): it names no code, so
loading it can construct nothing but the engine's own data values, and a checkpoint that holds
anything else is refused before anything uses it. Three things make it safe to start from:

- **Integrity**: the journal's ``checkpoint`` record holds the file's SHA-256 and is itself in the
  hash chain; a checkpoint whose bytes do not match is refused before it is read.
- **Plain data only**: no pickle. Every object is one of an allow-list of data classes, built by
  its own constructor from fields it has (wire models validated again); an unknown class, field
  or kind of value is refused, naming where it is.
- **Versioned**: :data:`FORMAT` is the layout of this file and ``engine.state_data.STATE_VERSION``
  that of the engine's state. Another version (an older pickle of format 1, a state with other
  fields) is refused with the reason: start-up replays from an earlier point instead (see
  ``controller.journal.recovery``).

The engine settings (deck registry included) are not in the checkpoint: they come from the
configuration at start-up, as they do for a replay.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from typing import Any, Final

from contract.models import Alert, PublicState
from controller.service.outgoing import Outgoing
from controller.service.signals import DealerSignals, LampSetting
from engine.api import EngineSettings
from engine.state import EngineState
from engine.state_data import Codec, StateDataError, state_from_data, state_to_data

#: The layout of a checkpoint file: 2, JSON of plain data (1 was a pickle, no longer read).
FORMAT: Final = 2
_PICKLE_START: Final = b"\x80"  # (every pickle of protocol 2 and above starts with PROTO)
_KEYS: Final = frozenset(
    {
        "format",
        "covers",
        "session",
        "engine",
        "state",
        "signals",
        "unpublished",
        "recent",
        "journal_alert",
        "devices",
    }
)


class CheckpointError(ValueError):
    """A checkpoint that cannot be used (the message says why)."""


@dataclass
class Snapshot:
    """What the controller needs to carry on after record ``covers`` as if it had replayed it."""

    covers: int
    session: int
    engine: EngineState
    state: PublicState | None
    signals: DealerSignals
    #: Alerts and commands produced but not yet journaled as published (in order).
    unpublished: list[Any] = field(default_factory=list)
    #: Digests of the last messages received (joined) and their record numbers: repeats are
    #: recognised after a restart (see ``controller.service.repeats``).
    recent: tuple[bytes, tuple[int, ...]] = (b"", ())
    #: The controller's own alert about the journal, while it is active.
    journal_alert: Alert | None = None
    #: Devices the table follows besides the configured ones (bounded: ``controller.service.table``).
    devices: frozenset[str] = frozenset()
    format: int = FORMAT


_CODEC: list[Codec] = []


def _codec() -> Codec:
    """The engine's codec plus the controller's own data classes (built once)."""
    if not _CODEC:
        _CODEC.append(Codec(extra=(Outgoing, LampSetting)))
    return _CODEC[0]


def output_data(out: Outgoing) -> Any:
    """An output as a checkpoint holds it, in plain data (the same for as long as the output is
    owed: an output never changes, so a caller may keep it for the next checkpoints)."""
    return _codec().dump(out)


def dump(snapshot: Snapshot, outputs: list[Any] | None = None) -> bytes:
    """The snapshot as compressed JSON (a few kB); ``outputs``: ``snapshot.unpublished``, each as
    :func:`output_data` gave it, when the caller kept them (behind a broker whose PUBACKs lag,
    hundreds of hand results are owed, and each checkpoint turned them all into plain data again:
    about 45 % of its cost)."""
    codec = _codec()
    signals = snapshot.signals
    data = {
        "format": FORMAT,
        "covers": snapshot.covers,
        "session": snapshot.session,
        "engine": state_to_data(snapshot.engine, codec),
        "state": codec.dump(snapshot.state),
        "signals": {
            "buzzer_ms": signals.buzzer_ms,
            "active": codec.dump(signals.active),
            "lamp_sent": codec.dump(signals.lamp_sent),
        },
        "unpublished": outputs if outputs is not None else codec.dump(tuple(snapshot.unpublished)),
        "recent": codec.dump(snapshot.recent),
        "journal_alert": codec.dump(snapshot.journal_alert),
        "devices": codec.dump(snapshot.devices),
    }
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return zlib.compress(text.encode(), 1)


def load(data: bytes, settings: EngineSettings) -> Snapshot:
    """The snapshot in ``data`` with ``settings`` in place; :class:`CheckpointError` if unusable."""
    try:
        raw = zlib.decompress(data)
    except zlib.error as error:
        raise CheckpointError(f"unreadable: not compressed data ({error})") from error
    if raw.startswith(_PICKLE_START):
        raise CheckpointError(
            "format 1 (a pickle, written by an earlier version), which this version does not read"
        )
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as error:
        raise CheckpointError(f"unreadable: not JSON ({error})") from error
    except RecursionError as error:
        raise CheckpointError("unreadable: nested too deeply for a checkpoint") from error
    if not isinstance(document, dict):
        raise CheckpointError("not a checkpoint: a JSON object is expected")
    if document.get("format") != FORMAT:
        raise CheckpointError(
            f"format {document.get('format')!r}, which this version does not read (it reads {FORMAT})"
        )
    if set(document) != _KEYS:
        raise CheckpointError(f"not a checkpoint of format {FORMAT}: keys {sorted(document)}")
    try:
        return _snapshot(document, settings)
    except StateDataError as error:
        raise CheckpointError(str(error)) from error
    except RecursionError as error:
        raise CheckpointError("unreadable: nested too deeply for a checkpoint") from error


def _snapshot(document: dict[str, Any], settings: EngineSettings) -> Snapshot:
    """The snapshot of a format-2 document; :class:`StateDataError` where it is wrong."""
    codec = _codec()

    def value(key: str, kind: type | tuple[type, ...]) -> Any:
        loaded = codec.load(document[key], key)
        if not isinstance(loaded, kind) or (isinstance(loaded, bool) and bool not in _kinds(kind)):
            raise StateDataError(f"{key}: {type(loaded).__name__} is not what a checkpoint holds here")
        return loaded

    covers = value("covers", int)
    session = value("session", int)
    state = value("state", (PublicState, type(None)))
    unpublished = value("unpublished", tuple)
    for i, item in enumerate(unpublished):
        if not isinstance(item, Outgoing):
            raise StateDataError(f"unpublished[{i}]: {type(item).__name__} is not an output")
    recent = value("recent", tuple)
    if (
        len(recent) != 2
        or not isinstance(recent[0], bytes)
        or not isinstance(recent[1], tuple)
        or not all(type(n) is int for n in recent[1])
    ):
        raise StateDataError("recent: (digests, record numbers) expected")
    journal_alert = value("journal_alert", (Alert, type(None)))
    devices = value("devices", frozenset)
    if not all(isinstance(d, str) for d in devices):
        raise StateDataError("devices: device names expected")
    signals = _signals(document["signals"], codec)
    engine = state_from_data(document["engine"], settings, codec)
    return Snapshot(
        covers=covers,
        session=session,
        engine=engine,
        state=state,
        signals=signals,
        unpublished=list(unpublished),
        recent=recent,
        journal_alert=journal_alert,
        devices=devices,
    )


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _signals(data: Any, codec: Codec) -> DealerSignals:
    if not isinstance(data, dict) or set(data) != {"buzzer_ms", "active", "lamp_sent"}:
        raise StateDataError("signals: buzzer_ms, active and lamp_sent expected")
    buzzer_ms = data["buzzer_ms"]
    active = codec.load(data["active"], "signals.active")
    lamp_sent = codec.load(data["lamp_sent"], "signals.lamp_sent")
    if type(buzzer_ms) is not int or buzzer_ms < 0:
        raise StateDataError("signals.buzzer_ms: a number of milliseconds expected")
    if not isinstance(active, tuple) or not all(isinstance(a, Alert) for a in active):
        raise StateDataError("signals.active: alerts expected")
    if lamp_sent is not None and not isinstance(lamp_sent, LampSetting):
        raise StateDataError("signals.lamp_sent: a lamp setting expected")
    return DealerSignals.restored(buzzer_ms=buzzer_ms, active=active, lamp_sent=lamp_sent)
