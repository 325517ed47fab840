"""The archive: every run, attempt, MAP-Elites cell and event of evoforge, in one SQLite file.

:class:`Archive` opens (and migrates) the file; the controller records each candidate in one
:meth:`Archive.transaction`, islands read and write grids with :meth:`Archive.offer` and
:meth:`Archive.elites`, and users mine runs with :meth:`Archive.top`,
:meth:`Archive.pareto_front`, :meth:`Archive.lineage` and :meth:`Archive.diff`;
``Archive(path, read_only=True)`` reads while a run writes, and cannot write. The archive
answers with stored rows and counts; what they mean (a run's statistics and timeline, its
failures grouped, what its calls bought) is :mod:`evoforge.evolve.mining`.

Names are imported on first use (:mod:`evoforge.base.lazy`). ``migrations`` (the schema's
sqlite-utils migration set) is imported only when read: sqlite-utils imports pandas and numpy,
which opening an archive whose schema is current does not need (:mod:`evoforge.archive._schema`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.archive._archive import EDIT_MATCHES as EDIT_MATCHES, Archive as Archive
    from evoforge.archive._errors import (
        ArchiveError as ArchiveError,
        ArchiveWriteError as ArchiveWriteError,
        RunLockedError as RunLockedError,
    )
    from evoforge.archive._feedback import (
        REPAIRABLE as REPAIRABLE,
        AttemptOutcome as AttemptOutcome,
        attempt_outcomes as attempt_outcomes,
        failed_children as failed_children,
        improved as improved,
        model_outcomes as model_outcomes,
        repairable_failures as repairable_failures,
    )
    from evoforge.archive._history import (
        FailureRows as FailureRows,
        failure_rows as failure_rows,
        ids_by_seq as ids_by_seq,
        timeline_rows as timeline_rows,
    )
    from evoforge.archive._lock import RunLock as RunLock, lock_path as lock_path
    from evoforge.archive._migrations import migrations as migrations
    from evoforge.archive._outcome import EvalResult as EvalResult, Status as Status
    from evoforge.archive._pareto import non_dominated as non_dominated
    from evoforge.archive._patch import bundle_files as bundle_files, file_patch as file_patch
    from evoforge.archive._paths import (
        DB_ENV as DB_ENV,
        DEFAULT_DB as DEFAULT_DB,
        default_db as default_db,
    )
    from evoforge.archive._program import (
        Program as Program,
        attempt_id as attempt_id,
        program_id as program_id,
    )
    from evoforge.archive._prompt_variants import (
        ORIGINS as ORIGINS,
        PromptVariant as PromptVariant,
        VariantOrigin as VariantOrigin,
        VariantStats as VariantStats,
        variant_id as variant_id,
    )
    from evoforge.archive._queries import Node as Node
    from evoforge.archive._records import (
        Elite as Elite,
        Event as Event,
        IslandState as IslandState,
        LlmCall as LlmCall,
        RunInfo as RunInfo,
        RunStatus as RunStatus,
    )
    from evoforge.archive._stats import ArchiveStats as ArchiveStats
    from evoforge.archive._status import AddStatus as AddStatus
    from evoforge.archive._suites import (
        Grant as Grant,
        SuiteInfo as SuiteInfo,
        SuiteTask as SuiteTask,
    )
    from evoforge.archive._usage import (
        CallCounts as CallCounts,
        ModelUsage as ModelUsage,
        call_counts as call_counts,
        model_usage as model_usage,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
