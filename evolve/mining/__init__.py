"""Mining a run: its numbers in each objective's own direction, statistics, comparison of runs
and export of programs, shared by the CLI (``evoforge stats``, ``compare``, ``export``...) and
the dashboard (``evoforge ui``).

Example::

    with Archive("evoforge.db") as archive:
        run = archive.latest_run()
        view = run_view(archive, run)
        print(view.describe(run.best_score))  # "sum_radii 2.61 (max)"
        stats = run_stats(archive, run, view=view)
"""

from evoforge.evolve.mining._export import (
    REL_TOL,
    Exported,
    ExportError,
    export_programs,
    metadata,
    reproduced,
    verify,
)
from evoforge.evolve.mining._prompts import OFF_MESSAGE, first_change, prompt_variant_table
from evoforge.evolve.mining._stats import (
    CHECKPOINTS,
    STATUS_LABELS,
    checkpoints,
    compare_runs,
    run_stats,
    run_summary,
    step_dict,
)
from evoforge.evolve.mining._view import RunView, arrow, fmt, run_view

__all__ = [
    # prompt variants
    "OFF_MESSAGE",
    "first_change",
    "prompt_variant_table",
    # a run's objectives and axes, for display
    "RunView",
    "arrow",
    "fmt",
    "run_view",
    # statistics and comparison
    "CHECKPOINTS",
    "STATUS_LABELS",
    "checkpoints",
    "compare_runs",
    "run_stats",
    "run_summary",
    "step_dict",
    # export
    "REL_TOL",
    "Exported",
    "ExportError",
    "export_programs",
    "metadata",
    "reproduced",
    "verify",
]
