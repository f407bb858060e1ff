"""The one error type of configuration loading: a single line that names the place."""

from __future__ import annotations

from pathlib import Path


class ConfigError(Exception):
    """A configuration or registry problem, with a message like ``file:line: key: what``."""


def read_text(path: Path, what: str) -> str:
    """The text of a configuration file; a ConfigError naming the file and ``what`` it is."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read {what}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: {what} is not UTF-8 text") from None
