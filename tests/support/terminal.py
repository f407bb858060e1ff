"""Children started as a terminal starts them: Ctrl-C (SIGINT) at its default disposition."""

from __future__ import annotations

from typing import Final

#: The start of the command line of a child a test interrupts with SIGINT.
#:
#: A shell starts a background job (``scripts/test &``) with SIGINT ignored, and an ignored
#: signal stays ignored across ``exec``: a Ctrl-C sent before the child installs its own handler
#: would be lost, which no terminal does to the program in its foreground. coreutils' ``env``
#: puts the default back and execs the program (same pid); not ``preexec_fn``, unsafe in a
#: process with threads.
AS_FROM_A_TERMINAL: Final = ("env", "--default-signal=INT")
