"""The journal: the append-only, hash-chained record of everything the controller received and sent.

It serves two readers. The regulator's audit reads it as the plain record of the table (every
message received, every alert, state and command published; ``tablectl journal verify`` proves it
whole, ``tablectl journal export`` extracts a span). The controller reads it at start-up to
recover: from the newest checkpoint of the engine state and the records after it.

Modules: :mod:`~controller.journal.records` (the kinds and their lines), :mod:`~.files` (where the
segments and checkpoints are; the one place that creates them), :mod:`~.reader` (reading back,
checking the chain), :mod:`~.writer` (the open journal, composed of parts that each own their
state: :mod:`~.submissions` the numbered queue, :mod:`~.appender` the writer thread's appending
over :mod:`~.segment` the open file, :mod:`~.sync` the syncer, :mod:`~.faults` the fault handling
with :mod:`~.held` the early acknowledgements, :mod:`~.positions` how far they got; their shared
data types in :mod:`~.state`),
:mod:`~.verify`, :mod:`~.export` and :mod:`~.cli` (the command-line tools).
"""

from controller.journal.files import JournalFiles, Segment
from controller.journal.reader import JournalContents, JournalReader, JournalScan, Position, read_journal
from controller.journal.records import (
    KINDS,
    PUBLISHED_WHAT,
    CheckpointRecord,
    JournalRecord,
    OutageRecord,
    PublishedRecord,
    PublishedWhat,
    ReceivedRecord,
    RejectedRecord,
    RetentionRecord,
    SampleRecord,
    StartRecord,
    TimeRecord,
)
from controller.journal.writer import (
    AppendPosition,
    Journal,
    JournalOptions,
    Progress,
    append_position,
    open_journal,
)

__all__ = [
    "KINDS",
    "PUBLISHED_WHAT",
    "AppendPosition",
    "CheckpointRecord",
    "Journal",
    "JournalContents",
    "JournalFiles",
    "JournalOptions",
    "JournalReader",
    "JournalRecord",
    "JournalScan",
    "OutageRecord",
    "Position",
    "Progress",
    "PublishedRecord",
    "PublishedWhat",
    "ReceivedRecord",
    "RejectedRecord",
    "RetentionRecord",
    "SampleRecord",
    "Segment",
    "StartRecord",
    "TimeRecord",
    "append_position",
    "open_journal",
    "read_journal",
]
