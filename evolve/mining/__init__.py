"""Mining a run: its numbers in each objective's own direction, statistics, comparison of runs
and export of programs, shared by the CLI (``evoforge stats``, ``compare``, ``export``...) and
the dashboard (``evoforge ui``).

Example::

    with Archive("evoforge.db") as archive:
        run = archive.latest_run()
        view = run_view(archive, run)
        print(view.describe(run.best_score))  # "sum_radii 2.61 (max)"
        stats = run_stats(archive, run, view=view)

Names are imported on first use (:mod:`evoforge.base.lazy`): ``evoforge status`` formats values
(:func:`fmt`) without loading export or statistics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_exports

if TYPE_CHECKING:
    from evoforge.evolve.mining._export import (
        REL_TOL,
        Exported,
        ExportError,
        export_programs,
        metadata,
        reproduced,
        verify,
    )
    from evoforge.evolve.mining._patches import apply_patch, patch_text, write_patches
    from evoforge.evolve.mining._prompts import OFF_MESSAGE, first_change, prompt_variant_table
    from evoforge.evolve.mining._stats import (
        CHECKPOINTS,
        STATUS_LABELS,
        checkpoints,
        compare_runs,
        cost_text,
        run_stats,
        run_summary,
        step_dict,
    )
    from evoforge.evolve.mining._view import RunView, arrow, fmt, run_view

# name -> the module that defines it
_EXPORTS = {
    "REL_TOL": "evoforge.evolve.mining._export",
    "Exported": "evoforge.evolve.mining._export",
    "ExportError": "evoforge.evolve.mining._export",
    "export_programs": "evoforge.evolve.mining._export",
    "metadata": "evoforge.evolve.mining._export",
    "reproduced": "evoforge.evolve.mining._export",
    "verify": "evoforge.evolve.mining._export",
    "apply_patch": "evoforge.evolve.mining._patches",
    "patch_text": "evoforge.evolve.mining._patches",
    "write_patches": "evoforge.evolve.mining._patches",
    "OFF_MESSAGE": "evoforge.evolve.mining._prompts",
    "first_change": "evoforge.evolve.mining._prompts",
    "prompt_variant_table": "evoforge.evolve.mining._prompts",
    "CHECKPOINTS": "evoforge.evolve.mining._stats",
    "STATUS_LABELS": "evoforge.evolve.mining._stats",
    "checkpoints": "evoforge.evolve.mining._stats",
    "compare_runs": "evoforge.evolve.mining._stats",
    "cost_text": "evoforge.evolve.mining._stats",
    "run_stats": "evoforge.evolve.mining._stats",
    "run_summary": "evoforge.evolve.mining._stats",
    "step_dict": "evoforge.evolve.mining._stats",
    "RunView": "evoforge.evolve.mining._view",
    "arrow": "evoforge.evolve.mining._view",
    "fmt": "evoforge.evolve.mining._view",
    "run_view": "evoforge.evolve.mining._view",
}

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
    "cost_text",
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
    # repository programs as patches
    "apply_patch",
    "patch_text",
    "write_patches",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
