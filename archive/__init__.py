"""The archive: every run, attempt, MAP-Elites cell and event of evoforge, in one SQLite file.

:class:`Archive` opens (and migrates) the file; the controller records each candidate in one
:meth:`Archive.transaction`, islands read and write grids with :meth:`Archive.offer` and
:meth:`Archive.elites`, and users mine runs with :meth:`Archive.top`,
:meth:`Archive.pareto_front`, :meth:`Archive.lineage`, :meth:`Archive.diff`,
:meth:`Archive.timeline` and :meth:`Archive.failure_groups`; ``Archive(path, read_only=True)``
reads while a run writes, and cannot write.
"""

from evoforge.archive._archive import DB_ENV, DEFAULT_DB, EDIT_MATCHES, Archive, default_db
from evoforge.archive._errors import ArchiveError, ArchiveWriteError, RunLockedError
from evoforge.archive._failures import FailureGroup, failure_message, signature
from evoforge.archive._feedback import (
    REPAIRABLE,
    AttemptOutcome,
    ModelUsage,
    attempt_outcomes,
    failed_children,
    improved,
    model_outcomes,
    model_usage,
    repairable_failures,
)
from evoforge.archive._lock import RunLock, lock_path
from evoforge.archive._migrations import migrations
from evoforge.archive._mining import Node
from evoforge.archive._outcome import EvalResult, Status
from evoforge.archive._pareto import non_dominated
from evoforge.archive._program import Program, attempt_id, program_id
from evoforge.archive._prompt_variants import (
    ORIGINS,
    PromptVariant,
    VariantOrigin,
    VariantStats,
    variant_id,
)
from evoforge.archive._records import Elite, Event, IslandState, LlmCall, RunInfo, RunStatus
from evoforge.archive._stats import ArchiveStats
from evoforge.archive._status import AddStatus
from evoforge.archive._timeline import Bucket, Improvement, Timeline
from evoforge.archive._usage import CallUsage, call_usage

__all__ = [
    # the archive
    "DB_ENV",
    "DEFAULT_DB",
    "Archive",
    "default_db",
    "ArchiveError",
    "ArchiveWriteError",
    "migrations",
    # one writer per run
    "RunLock",
    "RunLockedError",
    "lock_path",
    # programs and what happened to them
    "EDIT_MATCHES",
    "EvalResult",
    "Program",
    "Status",
    "attempt_id",
    "program_id",
    # runs and their records
    "Event",
    "IslandState",
    "LlmCall",
    "RunInfo",
    "RunStatus",
    # mining a run
    "Bucket",
    "CallUsage",
    "FailureGroup",
    "Improvement",
    "Node",
    "Timeline",
    "call_usage",
    "non_dominated",
    "failure_message",
    "signature",
    # prompt variants and their children
    "ORIGINS",
    "PromptVariant",
    "VariantOrigin",
    "VariantStats",
    "variant_id",
    # MAP-Elites grids
    "AddStatus",
    "ArchiveStats",
    "Elite",
    # feedback for prompts
    "REPAIRABLE",
    "AttemptOutcome",
    "attempt_outcomes",
    "failed_children",
    "improved",
    "ModelUsage",
    "model_outcomes",
    "model_usage",
    "repairable_failures",
]
