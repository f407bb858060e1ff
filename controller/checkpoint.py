"""Checkpoints: the controller's state after a received record, as bytes, and back.

The engine state is plain Python (a ``Machine`` of dicts, tuples, frozen dataclasses and pydantic
models), so a checkpoint is a pickle of it: no hand-written field list to keep in step with the
engine while it grows. Three things make that safe enough:

- **Integrity**: the journal's ``checkpoint`` record holds the file's SHA-256 and is itself in the
  hash chain; a checkpoint whose bytes do not match is refused before it is unpickled.
- **Only our classes**: the unpickler resolves nothing but classes of this project and a few plain
  standard types (no ``os.system``, no ``eval``): a pickle cannot run arbitrary code through it.
- **Same shape**: after loading, every object is checked against its class as the running code
  defines it (attributes of a fresh engine, dataclass fields, slots, pydantic fields). A checkpoint
  of an older engine, missing a field a newer one added, is refused: start-up replays from an
  earlier point instead of running on a half-filled state.

The engine settings (deck registry included) are not in the checkpoint: they come from the
configuration at start-up, as they do for a replay.
"""

from __future__ import annotations

import dataclasses
import io
import pickle
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel

from contract.models import Alert, PublicState
from controller.alerts_out import DealerSignals
from engine.api import EngineSettings
from engine.state import EngineState, new_state

FORMAT: Final = 1
_SETTINGS: Final = "engine-settings"
#: Module prefixes whose classes a checkpoint may contain.
_OUR_MODULES: Final = ("engine.", "contract.", "controller.", "config.")
_STANDARD: Final = {
    ("datetime", "datetime"),
    ("datetime", "date"),
    ("datetime", "timedelta"),
    ("datetime", "timezone"),
    ("collections", "deque"),
    ("collections", "OrderedDict"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "bytearray"),
    ("builtins", "slice"),
    ("copyreg", "_reconstructor"),
    ("builtins", "object"),
}


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
    #: recognised after a restart (see ``controller.repeats``).
    recent: tuple[bytes, tuple[int, ...]] = (b"", ())
    #: The controller's own alert about the journal, while it is active.
    journal_alert: Alert | None = None
    #: Devices the table follows besides the configured ones (bounded: ``controller.table``).
    devices: frozenset[str] = frozenset()
    format: int = FORMAT


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, settings: EngineSettings) -> None:
        super().__init__(file, protocol=5)
        self._settings = settings

    def persistent_id(self, obj: object) -> str | None:
        return _SETTINGS if obj is self._settings else None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, settings: EngineSettings) -> None:
        super().__init__(file)
        self._settings = settings

    def persistent_load(self, pid: Any) -> Any:
        if pid != _SETTINGS:
            raise CheckpointError(f"unknown reference {pid!r}")
        return self._settings

    def find_class(self, module: str, name: str) -> Any:
        if module.startswith(_OUR_MODULES) or (module, name) in _STANDARD:
            return super().find_class(module, name)
        raise CheckpointError(f"refers to {module}.{name}, which a checkpoint may not hold")


def dump(snapshot: Snapshot) -> bytes:
    """The snapshot as compressed bytes (cheap: a few kB, well under a millisecond)."""
    buffer = io.BytesIO()
    _Pickler(buffer, snapshot.engine.settings).dump(snapshot)
    return zlib.compress(buffer.getvalue(), 1)


def load(data: bytes, settings: EngineSettings) -> Snapshot:
    """The snapshot in ``data`` with ``settings`` in place; :class:`CheckpointError` if unusable."""
    try:
        raw = zlib.decompress(data)
        snapshot = _Unpickler(io.BytesIO(raw), settings).load()
    except CheckpointError:
        raise
    except Exception as error:  # a corrupt pickle can raise almost anything
        raise CheckpointError(f"unreadable: {type(error).__name__}: {error}") from error
    if not isinstance(snapshot, Snapshot) or snapshot.format != FORMAT:
        raise CheckpointError("not a checkpoint of this format")
    check_shape(snapshot, settings)
    return snapshot


# ------------------------------------------------------------------------------------------------
# The shape check
# ------------------------------------------------------------------------------------------------


def _objects(root: object) -> Iterator[object]:
    """Every object reachable from ``root`` through containers and instance attributes, once."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, str | bytes | int | float | bool | type(None)):
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple | set | frozenset):
            stack.extend(obj)
        elif isinstance(obj, BaseModel):
            stack.extend(obj.__dict__.values())
        elif hasattr(obj, "__dict__") and not isinstance(obj, type):
            stack.extend(vars(obj).values())
        if hasattr(type(obj), "__slots__") and not isinstance(obj, tuple):
            for name in _slots(type(obj)):
                if hasattr(obj, name):
                    stack.append(getattr(obj, name))


def _slots(cls: type) -> list[str]:
    names: list[str] = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else [s for s in slots if s != "__weakref__"]
    return names


def _missing(obj: object) -> list[str]:
    """Attributes the running code's class defines that ``obj`` lacks (or has and should not)."""
    cls = type(obj)
    if isinstance(obj, BaseModel):
        # Fields with defaults may be absent (the engine builds models without them, too); a
        # required field missing, or a field the running model does not know, is another version.
        fields = type(obj).model_fields
        missing = [n for n, f in fields.items() if f.is_required() and n not in obj.__dict__]
        return missing + [f"unknown {n}" for n in obj.__dict__ if n not in fields]
    if dataclasses.is_dataclass(obj):
        return [f.name for f in dataclasses.fields(obj) if not hasattr(obj, f.name)]
    if hasattr(cls, "__slots__") and not isinstance(obj, tuple):
        return [name for name in _slots(cls) if name != "__dict__" and not hasattr(obj, name)]
    return []


def check_shape(snapshot: Snapshot, settings: EngineSettings) -> None:
    """Refuse a snapshot whose objects lack what the running code's classes define.

    The engine's machine is compared with a fresh one (its attributes are set in ``__init__``, not
    declared); everything else is checked against its dataclass fields, slots or pydantic fields.
    """
    fresh = set(vars(new_state(settings).machine))
    restored = set(vars(snapshot.engine.machine))
    if fresh != restored:
        added = ", ".join(sorted(fresh - restored)) or "none"
        removed = ", ".join(sorted(restored - fresh)) or "none"
        raise CheckpointError(
            f"written by another engine version (fields missing: {added}; unknown: {removed})"
        )
    for obj in _objects(snapshot):
        missing = _missing(obj)
        if missing:
            raise CheckpointError(
                f"written by another version: {type(obj).__qualname__} lacks {', '.join(missing)}"
            )
