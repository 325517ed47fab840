"""The archive: every run, attempt, MAP-Elites cell and event of evoforge, in one SQLite file.

:class:`Archive` opens (and migrates) the file; the controller records each candidate in one
:meth:`Archive.transaction`, islands read and write grids with :meth:`Archive.offer` and
:meth:`Archive.elites`, and users mine runs with :meth:`Archive.top`,
:meth:`Archive.pareto_front`, :meth:`Archive.lineage`, :meth:`Archive.diff`,
:meth:`Archive.timeline` and :meth:`Archive.failure_groups`; ``Archive(path, read_only=True)``
reads while a run writes, and cannot write.

Names are imported on first use (:mod:`evoforge.base.lazy`). ``migrations`` (the schema's
sqlite-utils migration set) is imported only when read: sqlite-utils imports pandas and numpy,
which opening an archive whose schema is current does not need (:mod:`evoforge.archive._schema`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_exports

if TYPE_CHECKING:
    from evoforge.archive._archive import EDIT_MATCHES, Archive
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
    from evoforge.archive._outcome import EvalResult, Status
    from evoforge.archive._pareto import non_dominated
    from evoforge.archive._patch import bundle_files, file_patch
    from evoforge.archive._paths import DB_ENV, DEFAULT_DB, default_db
    from evoforge.archive._program import Program, attempt_id, program_id
    from evoforge.archive._prompt_variants import (
        ORIGINS,
        PromptVariant,
        VariantOrigin,
        VariantStats,
        variant_id,
    )
    from evoforge.archive._queries import Node
    from evoforge.archive._records import Elite, Event, IslandState, LlmCall, RunInfo, RunStatus
    from evoforge.archive._stats import ArchiveStats
    from evoforge.archive._status import AddStatus
    from evoforge.archive._timeline import Bucket, Improvement, Timeline
    from evoforge.archive._usage import CallCost, CallUsage, call_cost, call_usage

# name -> the module that defines it
_EXPORTS = {
    "DB_ENV": "evoforge.archive._paths",
    "DEFAULT_DB": "evoforge.archive._paths",
    "EDIT_MATCHES": "evoforge.archive._archive",
    "Archive": "evoforge.archive._archive",
    "default_db": "evoforge.archive._paths",
    "ArchiveError": "evoforge.archive._errors",
    "ArchiveWriteError": "evoforge.archive._errors",
    "RunLockedError": "evoforge.archive._errors",
    "FailureGroup": "evoforge.archive._failures",
    "failure_message": "evoforge.archive._failures",
    "signature": "evoforge.archive._failures",
    "REPAIRABLE": "evoforge.archive._feedback",
    "AttemptOutcome": "evoforge.archive._feedback",
    "ModelUsage": "evoforge.archive._feedback",
    "attempt_outcomes": "evoforge.archive._feedback",
    "failed_children": "evoforge.archive._feedback",
    "improved": "evoforge.archive._feedback",
    "model_outcomes": "evoforge.archive._feedback",
    "model_usage": "evoforge.archive._feedback",
    "repairable_failures": "evoforge.archive._feedback",
    "RunLock": "evoforge.archive._lock",
    "lock_path": "evoforge.archive._lock",
    "migrations": "evoforge.archive._migrations",
    "Node": "evoforge.archive._queries",
    "bundle_files": "evoforge.archive._patch",
    "file_patch": "evoforge.archive._patch",
    "EvalResult": "evoforge.archive._outcome",
    "Status": "evoforge.archive._outcome",
    "non_dominated": "evoforge.archive._pareto",
    "Program": "evoforge.archive._program",
    "attempt_id": "evoforge.archive._program",
    "program_id": "evoforge.archive._program",
    "ORIGINS": "evoforge.archive._prompt_variants",
    "PromptVariant": "evoforge.archive._prompt_variants",
    "VariantOrigin": "evoforge.archive._prompt_variants",
    "VariantStats": "evoforge.archive._prompt_variants",
    "variant_id": "evoforge.archive._prompt_variants",
    "Elite": "evoforge.archive._records",
    "Event": "evoforge.archive._records",
    "IslandState": "evoforge.archive._records",
    "LlmCall": "evoforge.archive._records",
    "RunInfo": "evoforge.archive._records",
    "RunStatus": "evoforge.archive._records",
    "ArchiveStats": "evoforge.archive._stats",
    "AddStatus": "evoforge.archive._status",
    "Bucket": "evoforge.archive._timeline",
    "Improvement": "evoforge.archive._timeline",
    "Timeline": "evoforge.archive._timeline",
    "CallCost": "evoforge.archive._usage",
    "CallUsage": "evoforge.archive._usage",
    "call_cost": "evoforge.archive._usage",
    "call_usage": "evoforge.archive._usage",
}

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
    "CallCost",
    "CallUsage",
    "FailureGroup",
    "Improvement",
    "Node",
    "Timeline",
    # repository programs as patches
    "bundle_files",
    "file_patch",
    "call_cost",
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
