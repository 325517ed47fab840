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

from typing import TYPE_CHECKING, Any

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge._api import (
        RunResult as RunResult,
        open_archive as open_archive,
        resume as resume,
        resume_async as resume_async,
        run as run,
        run_async as run_async,
    )
    from evoforge._dataframes import to_frame as to_frame
    from evoforge.archive import (
        DEFAULT_DB as DEFAULT_DB,
        Archive as Archive,
        ArchiveError as ArchiveError,
        Program as Program,
        RunInfo as RunInfo,
        Status as Status,
    )
    from evoforge.base.settings import ConfigError as ConfigError
    from evoforge.evolve import RunConfig as RunConfig, SeedError as SeedError
    from evoforge.plugins import hookimpl as hookimpl
    from evoforge.problems import (
        Problem as Problem,
        ProblemSpecError as ProblemSpecError,
        define_problem as define_problem,
        load_problem as load_problem,
    )

_lazy_getattr, _lazy_dir, _exports = lazy_package(__name__)
__all__ = [*_exports, "__version__"]


def __dir__() -> list[str]:
    return sorted({*_lazy_dir(), "__version__"})


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("evoforge")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0+unknown"
    return _lazy_getattr(name)
