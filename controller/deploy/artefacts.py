"""A rendered file, where it goes on the table PC, and writing them all out."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from controller.journal.private_files import FILE_MODE, private_directory

#: Mode of rendered files that hold no secret.
PUBLIC_MODE: Final = 0o644


class DeployError(Exception):
    """A rendering problem: one line naming what to fix."""


@dataclass(frozen=True)
class Artefact:
    """One rendered file: written under the output directory, installed at ``install``."""

    path: Path
    text: str
    #: Where it goes on the table PC (or who receives it), with owner and mode there.
    install: str
    owner: str
    mode: str
    #: Holds a secret (a password or its hash): written 0600, never printed.
    secret: bool = False


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to a fresh ``path`` with mode 0600 (a file there is replaced)."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    with open(fd, "w", encoding="utf-8") as file:
        file.write(text)


def write_all(out: Path, artefacts: Iterable[Artefact]) -> None:
    """Write every artefact under ``out`` (0600 for secrets, 0644 otherwise; directories 0700)."""
    for artefact in artefacts:
        target = out / artefact.path
        private_directory(target.parent, "the rendered secrets")
        write_private(target, artefact.text)
        if not artefact.secret:
            target.chmod(PUBLIC_MODE)


def manifest(artefacts: Iterable[Artefact]) -> str:
    """A table of the files and where each goes (no content: secrets are never printed)."""
    rows = [(str(a.path), a.install, a.owner, a.mode) for a in artefacts]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "".join(
        f"{path:<{widths[0]}}  ->  {install:<{widths[1]}}  {owner:<{widths[2]}}  {mode}\n"
        for path, install, owner, mode in rows
    )
