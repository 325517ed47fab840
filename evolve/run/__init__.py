"""The run: a session opens the archive and the evaluator for a problem (what this host can
measure, where evaluations run), the asynchronous steady-state controller turns proposals into
evaluated, recorded children until an ending (a budget, a stop, a streak of errors); a suite
runs its tasks as one run with one budget, granted where recent improvement is
(:mod:`~evoforge.evolve.run._allocation`), and a batch runs them one after the other, each on
its own budget. Above the configuration, below the interfaces (CLI, API).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evolve.run._allocation import (
        Arm as Arm,
        Bandit as Bandit,
        Decision as Decision,
        EqualSplit as EqualSplit,
        Policy as Policy,
        make_policy as make_policy,
    )
    from evoforge.evolve.run._batch import (
        FAST_P as FAST_P,
        SuiteMetrics as SuiteMetrics,
        TaskResult as TaskResult,
        baselines_of as baselines_of,
        run_batch as run_batch,
        speedups_of as speedups_of,
        suite_metrics as suite_metrics,
        task_result as task_result,
    )
    from evoforge.evolve.run._controller import (
        Controller as Controller,
        SeedError as SeedError,
        shorten as shorten,
    )
    from evoforge.evolve.run._endings import (
        Allowance as Allowance,
        Budgets as Budgets,
        Ending as Ending,
    )
    from evoforge.evolve.run._host_fit import measurable_problem as measurable_problem
    from evoforge.evolve.run._progress import LiveProgress as LiveProgress
    from evoforge.evolve.run._proposer import make_proposer as make_proposer
    from evoforge.evolve.run._resolve import (
        Resolved as Resolved,
        resolve as resolve,
        resolve_problem as resolve_problem,
    )
    from evoforge.evolve.run._session import (
        SessionOptions as SessionOptions,
        StopEvent as StopEvent,
        SuiteShare as SuiteShare,
        resume_run as resume_run,
        start_run as start_run,
    )
    from evoforge.evolve.run._snapshot import (
        EngineTimings as EngineTimings,
        Progress as Progress,
        SessionReport as SessionReport,
        Snapshot as Snapshot,
    )
    from evoforge.evolve.run._suite import (
        SuiteProgress as SuiteProgress,
        SuiteReport as SuiteReport,
        resume_suite as resume_suite,
        start_suite as start_suite,
    )
    from evoforge.evolve.run._suite_progress import LiveSuiteProgress as LiveSuiteProgress

__getattr__, __dir__, __all__ = lazy_package(__name__)
