"""evoforge: evolve programs with LLMs, the way AlphaEvolve does.

An island-model MAP-Elites database of programs (SQLite) supplies parents, a model proposes
changes, sandboxed evaluators score the children, and every attempt is kept for mining. This
module is the Python API; the ``evoforge`` command does the same from a shell.

Run a problem (the built-in offline model needs no key and no network)::

    import evoforge

    result = evoforge.run("circle_packing", budget=300, seed=1, db="runs.db")
    print(result.status, result.best.objectives)
    evoforge.resume(result.run_id, db="runs.db", budget=600)  # later, or after a crash

Mine the archive::

    with evoforge.open_archive("runs.db") as archive:
        best = archive.top(result.run_id, k=3)
        frame = evoforge.to_frame(best)           # a pandas DataFrame
        ancestors = archive.lineage(result.run_id, best[0].id)

Define a problem in Python (or write a folder: see :func:`evoforge.problems.load_problem`)::

    problem = evoforge.define_problem(
        "sort3", seed=SEED, evaluate=evaluate, objectives={"score": "maximize"}
    )
    evoforge.run(problem, budget=50)

Write a plugin (an ``evoforge`` entry point; see :mod:`evoforge.plugins`)::

    from evoforge import hookimpl

The parts, each a subpackage: :mod:`evoforge.archive` (SQLite storage and mining),
:mod:`evoforge.evaluators` (sandboxed evaluation, devices), :mod:`evoforge.evolve` (the
controller, models, prompts, CLI), :mod:`evoforge.islands` (population structure),
:mod:`evoforge.plugins` (hooks), :mod:`evoforge.problems` (the problem spec).

Names are imported on first use, so ``import evoforge`` costs almost nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evoforge._api import (
        RunResult,
        open_archive,
        resume,
        resume_async,
        run,
        run_async,
    )
    from evoforge._dataframes import to_frame
    from evoforge.archive import DEFAULT_DB, Archive, ArchiveError, Program, RunInfo, Status
    from evoforge.base.settings import ConfigError
    from evoforge.evolve import RunConfig, SeedError
    from evoforge.plugins import hookimpl
    from evoforge.problems import Problem, ProblemSpecError, define_problem, load_problem

# name -> the module that defines it
_EXPORTS = {
    # running
    "run": "evoforge._api",
    "run_async": "evoforge._api",
    "resume": "evoforge._api",
    "resume_async": "evoforge._api",
    "RunResult": "evoforge._api",
    "RunConfig": "evoforge.evolve",
    "DEFAULT_DB": "evoforge.archive",
    # problems
    "define_problem": "evoforge.problems",
    "load_problem": "evoforge.problems",
    "Problem": "evoforge.problems",
    # mining
    "open_archive": "evoforge._api",
    "to_frame": "evoforge._dataframes",
    "Archive": "evoforge.archive",
    "Program": "evoforge.archive",
    "RunInfo": "evoforge.archive",
    "Status": "evoforge.archive",
    # plugins
    "hookimpl": "evoforge.plugins",
    # errors
    "ArchiveError": "evoforge.archive",
    "ConfigError": "evoforge.base.settings",
    "ProblemSpecError": "evoforge.problems",
    "SeedError": "evoforge.evolve",
}

__all__ = [
    # running
    "run",
    "run_async",
    "resume",
    "resume_async",
    "RunResult",
    "RunConfig",
    "DEFAULT_DB",
    # problems
    "define_problem",
    "load_problem",
    "Problem",
    # mining
    "open_archive",
    "to_frame",
    "Archive",
    "Program",
    "RunInfo",
    "Status",
    # plugins
    "hookimpl",
    # errors
    "ArchiveError",
    "ConfigError",
    "ProblemSpecError",
    "SeedError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("evoforge")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0+unknown"
    if name not in _EXPORTS:
        raise AttributeError(f"module 'evoforge' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
