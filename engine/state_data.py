"""The engine state as plain data (JSON-ready, versioned) and back: what checkpoints hold.

No pickle: the data names no code. Values are JSON's own (``null``, booleans, numbers, strings),
arrays for tuples, and one-key objects for what JSON lacks::

    {"L": [...]}  list            {"F": [...]}  frozenset       {"S": [...]}  set
    {"D": [[key, value], ...]}    dict (any keys, in order)
    {"T": "2026-01-01T00:00:00+00:00"}  datetime   {"d": [days, seconds, us]}  timedelta
    {"B": "base64"}  bytes
    {"O": "Name", "f": {field: value}}  one of the allowed data classes, by its fields

A data object names its class by a key of an allow-list built from the classes themselves: the
engine's own data classes (dataclasses and named tuples of ``engine.*``, the betting core's
money value included), the contract's wire models (validated again by pydantic on the way in)
and the few the caller adds (the controller's). Anything else, or a field a class does not
have, or a value of the wrong kind where the fresh engine has one, is refused with
:class:`StateDataError` naming the place, before the state is used: the data can construct
only plain values through their own constructors.

:data:`STATE_VERSION` says which engine wrote the data. The machine's fields are compared with
a fresh machine's: data of another version (a field added, removed or renamed) is refused with a
reason, and the caller (controller.journal.recovery) replays from an earlier point instead.
"""

from __future__ import annotations

import base64
import dataclasses
import sys
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from engine.alerts import AlertBook
from engine.api import EngineSettings
from engine.dispatcher import Machine
from engine.seqtrack import EPOCH
from engine.state import EngineState, PublicCache, new_state
from engine.table import Table

#: The layout of :func:`state_to_data`'s output; raise it whenever a field of the machine or of
#: a data class it holds changes meaning, is added, removed or renamed.
#: (3: Machine.coming, the actions between hands, added; expected_burn removed. 4: the machine's
#: state in parts, one per concern: device_state, card_state, chip_state, deal_state,
#: board_state, result_state; version 3 data is refused, the caller replays instead. 5: the
#: hand's course and its sensors as a part, hand_part; version 4 data is refused the same way.
#: 6: BoardRedeal.burns, the burn a premature flop leaves in the burn, and ResultState.owners,
#: who wagered each chip in the pot; version 5 data is refused. 7: the foreign tags reported this
#: hand, fouled_seen, held by the cards' part (CardState) instead of the shared table, and
#: ResultState.awaiting, chip corrections judged once their evidence could have come; version
#: 6 data is migrated, :func:`_from_version_6`. 8: SequenceState.asking, heard and asked, the
#: devices asked to say their status after the broker was away; version 7 data is migrated,
#: :func:`_from_version_7`; SequenceState.answering, the devices that answer that ask. 9:
#: SequenceState.echoing, the devices whose answers name the ask; version 8 data is migrated,
#: :func:`_from_version_8`.)
STATE_VERSION: Final = 9

#: Table fields that come from the settings (given again at load), not from the data.
_FROM_SETTINGS: Final = frozenset({"settings", "profile", "reaction", "gap_wait"})
#: Table fields of one step's outputs: always empty between steps, so not stored; the alert
#: book, stored on its own ("alerts").
_NOT_STORED: Final = frozenset({"commands", "hands_out", "book"})
#: The alert book's fields stored (its profile comes from the settings, its changes are empty).
_BOOK_FIELDS: Final = ("active", "meta", "counter")


#: The values JSON holds as they are.
_PLAIN: Final = frozenset({str, int, bool, float, type(None)})


class StateDataError(ValueError):
    """Data that is not a state this engine can use (the message says where and why)."""


def _is_named_tuple(cls: type) -> bool:
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


def _data_classes(modules: Iterable[str]) -> dict[str, type]:
    """The dataclasses, named tuples and pydantic models defined in ``modules`` (loaded ones)."""
    found: dict[str, type] = {}
    for module_name in modules:
        module = sys.modules[module_name]
        for value in vars(module).values():
            if not isinstance(value, type) or value.__module__ != module_name:
                continue
            if value is EngineSettings:  # (settings come from the configuration, never data)
                continue
            if dataclasses.is_dataclass(value) or _is_named_tuple(value) or issubclass(value, BaseModel):
                name = value.__qualname__
                if name in found and found[name] is not value:
                    # (two classes of one name: the data would not say which)
                    raise RuntimeError(f"two data classes named {name}: {found[name]} and {value}")
                found[name] = value
    return found


def _ordered(items: set[Any] | frozenset[Any]) -> list[Any]:
    """A set's items in a fixed order where they have one (a set's own order depends on how it
    was built: the same state gives the same data)."""
    try:
        return sorted(items)
    except TypeError:  # (items of mixed or unordered types: as they come)
        return list(items)


def _our_modules() -> list[str]:
    return sorted(n for n in list(sys.modules) if n.startswith(("engine.", "contract.")))


class Codec:
    """Plain data to and from values, over an allow-list of data classes (see the module doc)."""

    def __init__(self, extra: Iterable[type] = ()) -> None:
        self.classes = _data_classes(_our_modules())
        for cls in extra:
            self.classes[cls.__qualname__] = cls

    # ----------------------------------------------------------------------------- out

    def dump(self, value: Any) -> Any:
        """``value`` as plain, JSON-ready data; TypeError for a value the codec does not know."""
        kind = type(value)
        if kind in _PLAIN:
            return value
        if kind is tuple:
            return [self.dump(v) for v in value]
        if kind is list:
            return {"L": [self.dump(v) for v in value]}
        if kind is frozenset:
            return {"F": [self.dump(v) for v in _ordered(value)]}
        if kind is set:
            return {"S": [self.dump(v) for v in _ordered(value)]}
        if kind is dict:
            return {"D": [[self.dump(k), self.dump(v)] for k, v in value.items()]}
        if kind is datetime:
            return {"T": value.isoformat()}
        if kind is timedelta:
            return {"d": [value.days, value.seconds, value.microseconds]}
        if kind is bytes:
            return {"B": base64.b64encode(value).decode("ascii")}
        name = kind.__qualname__
        if self.classes.get(name) is not kind:
            raise TypeError(f"{kind.__module__}.{name} is not a data class the state may hold")
        if isinstance(value, BaseModel):
            fields = {k: self.dump(v) for k, v in value.__dict__.items()}
        elif _is_named_tuple(kind):
            fields = {k: self.dump(v) for k, v in zip(kind._fields, value, strict=True)}
        else:
            fields = {f.name: self.dump(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"O": name, "f": fields}

    # ----------------------------------------------------------------------------- in

    def load(self, data: Any, where: str = "state") -> Any:
        """The value ``data`` stands for; :class:`StateDataError` (naming ``where``) if invalid."""
        if data is None or isinstance(data, bool | int | float | str):
            return data
        if isinstance(data, list):
            return tuple(self.load(v, f"{where}[{i}]") for i, v in enumerate(data))
        if not isinstance(data, dict) or not data:
            raise StateDataError(f"{where}: {type(data).__name__} is not state data")
        if "O" in data:
            return self._object(data, where)
        if len(data) != 1:
            raise StateDataError(f"{where}: an object with keys {sorted(data)} is not state data")
        ((tag, body),) = data.items()
        try:
            return self._tagged(tag, body, where)
        except StateDataError:
            raise
        except (TypeError, ValueError) as error:  # a wrong body for its tag
            raise StateDataError(f"{where}: bad {tag!r} value: {error}") from error

    def _tagged(self, tag: str, body: Any, where: str) -> Any:
        if tag in ("L", "F", "S", "D") and not isinstance(body, list):
            raise StateDataError(f"{where}: {tag!r} needs an array")
        if tag == "L":
            return [self.load(v, f"{where}[{i}]") for i, v in enumerate(body)]
        if tag == "F":
            return frozenset(self.load(v, f"{where}[{i}]") for i, v in enumerate(body))
        if tag == "S":
            return {self.load(v, f"{where}[{i}]") for i, v in enumerate(body)}
        if tag == "D":
            items: dict[Any, Any] = {}
            for i, pair in enumerate(body):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise StateDataError(f"{where}[{i}]: a dict item is a [key, value] pair")
                items[self.load(pair[0], f"{where}[{i}].key")] = self.load(pair[1], f"{where}[{i}]")
            return items
        if tag == "T" and isinstance(body, str):
            moment = datetime.fromisoformat(body)
            if moment.tzinfo is None:
                raise StateDataError(f"{where}: a time without its zone")
            return moment
        if tag == "d" and isinstance(body, list) and all(type(v) is int for v in body):
            return timedelta(*body)
        if tag == "B" and isinstance(body, str):
            return base64.b64decode(body, validate=True)
        raise StateDataError(f"{where}: {tag!r} is not a kind of state data (or its value is wrong)")

    def _object(self, data: dict[str, Any], where: str) -> Any:
        name, fields = data.get("O"), data.get("f")
        if set(data) != {"O", "f"} or not isinstance(name, str) or not isinstance(fields, dict):
            raise StateDataError(f"{where}: a data object is {{'O': name, 'f': {{fields}}}}")
        cls = self.classes.get(name)
        if cls is None:
            raise StateDataError(f"{where}: {name!r} is not a data class the state may hold")
        here = f"{where}.{name}"
        values = {k: self.load(v, f"{here}.{k}") for k, v in fields.items()}
        if issubclass(cls, BaseModel):
            unknown = set(values) - set(cls.model_fields)
            if unknown:
                raise StateDataError(f"{here}: no fields {', '.join(sorted(unknown))} (another version)")
            try:
                return cls.model_validate(values)
            except ValidationError as error:
                raise StateDataError(f"{here}: {error.error_count()} invalid fields: {error}") from error
        if _is_named_tuple(cls):
            expected: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
        else:
            expected = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
        if set(values) != set(expected):
            missing = ", ".join(sorted(set(expected) - set(values))) or "none"
            unknown_names = ", ".join(sorted(set(values) - set(expected))) or "none"
            raise StateDataError(
                f"{here}: fields differ from this version's (missing: {missing}; unknown: {unknown_names})"
            )
        try:
            return cls(**values)
        except (TypeError, ValueError) as error:
            raise StateDataError(f"{here}: {error}") from error


# --------------------------------------------------------------------------------------------
# The engine state
# --------------------------------------------------------------------------------------------

_CODEC: list[Codec] = []


def engine_codec() -> Codec:
    """The codec of the engine's own data classes (built once, after the engine is loaded)."""
    if not _CODEC:
        _CODEC.append(Codec())
    return _CODEC[0]


def _stored_fields(machine: Machine) -> dict[str, object]:
    """The fields stored, each with the object that holds it: the shared table's (engine.table)
    and the machine's state parts, side by side in one object of the data (their names are
    distinct: checked here)."""
    table = machine.table
    fields: dict[str, object] = {
        n: table for n in Table.__slots__ if n not in _FROM_SETTINGS and n not in _NOT_STORED
    }
    for name in vars(machine):
        if name != "table" and name not in Machine.CONCERNS and name not in Machine.REMEMBERED:
            if name in fields:
                raise RuntimeError(f"the table and the machine both hold a field {name}")
            fields[name] = machine
    return fields


def state_to_data(state: EngineState, codec: Codec | None = None) -> dict[str, Any]:
    """``state`` as plain data: ``{"version": ..., "machine": {field: value}, "alerts": ...}``."""
    codec = codec or engine_codec()
    machine = state.machine
    fields = {name: codec.dump(getattr(owner, name)) for name, owner in _stored_fields(machine).items()}
    book = machine.table.book
    return {
        "version": STATE_VERSION,
        "machine": fields,
        "alerts": {name: codec.dump(getattr(book, name)) for name in _BOOK_FIELDS},
    }


def state_from_data(data: Any, settings: EngineSettings, codec: Codec | None = None) -> EngineState:
    """The state ``data`` holds, with ``settings`` (the configuration's) in place.

    :class:`StateDataError` if it is not state data of this version: nothing is changed then.
    """
    codec = codec or engine_codec()
    if not isinstance(data, dict) or set(data) != {"version", "machine", "alerts"}:
        raise StateDataError("state: not engine state data")
    version = data["version"]
    if version == 6:
        data = _from_version_6(data)
        version = data["version"]
    if version == 7:
        data = _from_version_7(data)
        version = data["version"]
    if version == 8:
        data = _from_version_8(data)
        version = data["version"]
    if version != STATE_VERSION:
        raise StateDataError(
            f"state: written by engine state version {version!r}; this engine reads version "
            f"{STATE_VERSION} only"
        )
    fresh = new_state(settings).machine
    owners = _stored_fields(fresh)
    stored, given = set(owners), data["machine"]
    if not isinstance(given, dict) or set(given) != stored:
        names = set(given) if isinstance(given, dict) else set()
        missing = ", ".join(sorted(stored - names)) or "none"
        unknown = ", ".join(sorted(names - stored)) or "none"
        raise StateDataError(
            f"state: written by another engine version (fields missing: {missing}; unknown: {unknown})"
        )
    values = {name: codec.load(value, f"machine.{name}") for name, value in given.items()}
    for name, value in values.items():
        _check_kind(f"machine.{name}", value, getattr(owners[name], name))
    book_data = data["alerts"]
    if not isinstance(book_data, dict) or set(book_data) != set(_BOOK_FIELDS):
        raise StateDataError(f"state: alerts need exactly {', '.join(_BOOK_FIELDS)}")
    book_values = {name: codec.load(book_data[name], f"alerts.{name}") for name in _BOOK_FIELDS}
    for name, value in book_values.items():
        _check_kind(f"alerts.{name}", value, getattr(fresh.table.book, name))
    # Everything checked: only now is the machine filled in (a refusal above changed nothing).
    machine = fresh
    for name, value in values.items():
        setattr(owners[name], name, value)
    book = AlertBook(settings.profile)
    for name, value in book_values.items():
        setattr(book, name, value)
    machine.table.book = book
    machine.attach_concerns()
    return EngineState(machine, PublicCache())


def _from_version_6(data: dict[str, Any]) -> dict[str, Any]:
    """Version 6 data as version 7's (a new dict; ``data`` is left as it is): the shared
    table's ``fouled_seen`` moved into the cards' part, and no chip correction awaiting its
    evidence (version 6 judged them at once). Only that is done here; everything is checked as
    any data is afterwards."""
    machine = data["machine"]
    if not isinstance(machine, dict) or "fouled_seen" not in machine:
        raise StateDataError("state: version 6 data without the table's fouled_seen")
    moved = {name: value for name, value in machine.items() if name != "fouled_seen"}
    added: tuple[tuple[str, str, Any], ...] = (
        ("card_state", "fouled_seen", machine["fouled_seen"]),
        ("result_state", "awaiting", []),
    )
    for part, name, value in added:
        fields = machine[part].get("f") if isinstance(machine.get(part), dict) else None
        if not isinstance(fields, dict) or name in fields:
            raise StateDataError(f"machine.{part}: not version 6 data (no fields, or {name} already)")
        moved[part] = {**machine[part], "f": {**fields, name: value}}
    return {**data, "version": 7, "machine": moved}


def _from_version_7(data: dict[str, Any]) -> dict[str, Any]:
    """Version 7 data as version 8's (a new dict): no device asked to say its status (version 7
    asked none)."""
    machine = data["machine"]
    part = machine.get("device_seqs") if isinstance(machine, dict) else None
    fields = part.get("f") if isinstance(part, dict) else None
    if not isinstance(part, dict) or not isinstance(fields, dict) or "asking" in fields:
        raise StateDataError("machine.device_seqs: not version 7 data (no fields, or asking already)")
    added = {
        "asking": {"F": []},
        "heard": {"F": []},
        "asked": {"T": EPOCH.isoformat()},
        "answering": {"F": []},
    }
    return {**data, "version": 8, "machine": {**machine, "device_seqs": {**part, "f": {**fields, **added}}}}


def _from_version_8(data: dict[str, Any]) -> dict[str, Any]:
    """Version 8 data as version 9's (a new dict): no device known to name the ask it answers
    (version 8 drivers did not)."""
    machine = data["machine"]
    part = machine.get("device_seqs") if isinstance(machine, dict) else None
    fields = part.get("f") if isinstance(part, dict) else None
    if not isinstance(part, dict) or not isinstance(fields, dict) or "echoing" in fields:
        raise StateDataError("machine.device_seqs: not version 8 data (no fields, or echoing already)")
    added: dict[str, Any] = {"echoing": {"F": []}}
    return {**data, "version": 9, "machine": {**machine, "device_seqs": {**part, "f": {**fields, **added}}}}


def _check_kind(where: str, value: object, fresh: object) -> None:
    """A field a fresh machine holds a container, number or flag in must hold the same kind;
    so must each field of a state group (a data class the fresh machine holds).

    (Fields that start as None hold values of several kinds; their objects were checked by
    their classes' constructors.)"""
    if fresh is None:
        return
    expected = type(fresh)
    if (expected is int and type(value) is bool) or not isinstance(value, expected):
        raise StateDataError(f"{where}: {type(value).__name__} where this engine keeps a {expected.__name__}")
    if dataclasses.is_dataclass(fresh):
        for item in dataclasses.fields(fresh):
            _check_kind(f"{where}.{item.name}", getattr(value, item.name), getattr(fresh, item.name))
