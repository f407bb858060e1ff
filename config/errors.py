"""The one error type of configuration loading: each problem a single line that names the place."""

from __future__ import annotations

from pathlib import Path


class ConfigError(Exception):
    """Configuration or registry problems, each a line like ``file:line: key: what``.

    ``problems`` holds every problem found (a file with three mistakes names all three); the
    message is those lines, one under the other."""

    def __init__(self, *problems: str) -> None:
        super().__init__(*problems)
        self.problems: tuple[str, ...] = problems

    def __str__(self) -> str:
        return "\n".join(self.problems)


def read_text(path: Path, what: str) -> str:
    """The text of a configuration file; a ConfigError naming the file and ``what`` it is."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read {what}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: {what} is not UTF-8 text") from None
