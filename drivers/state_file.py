"""A driver's session number in a file of its own (``DriverOptions.state_file``), so that its
sessions number on across a process restart even without a broker. Errors are logged, never
raised: the file helps, the driver does not depend on it."""

from __future__ import annotations

import logging
from pathlib import Path


def load_session(path: Path, log: logging.Logger, device_id: str) -> int | None:
    """The session number the file holds (None: no file, or one that cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except OSError as error:
        log.error("%s: cannot read state file %s: %s", device_id, path, error)
        return None
    try:
        return int(text)
    except ValueError:
        log.error("%s: state file %s does not hold a session number", device_id, path)
        return None


def save_session(path: Path, session: int, log: logging.Logger, device_id: str) -> None:
    """Write the session number (through a temporary file: never half a number)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(f"{session}\n", encoding="utf-8")
        tmp.replace(path)
    except OSError as error:
        log.error("%s: cannot write state file %s: %s", device_id, path, error)
