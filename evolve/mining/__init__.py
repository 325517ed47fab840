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

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evolve.mining._export import (
        REL_TOL as REL_TOL,
        Exported as Exported,
        ExportError as ExportError,
        export_programs as export_programs,
        metadata as metadata,
        reproduced as reproduced,
        verify as verify,
    )
    from evoforge.evolve.mining._patches import (
        apply_patch as apply_patch,
        patch_text as patch_text,
        write_patches as write_patches,
    )
    from evoforge.evolve.mining._prompts import (
        OFF_MESSAGE as OFF_MESSAGE,
        first_change as first_change,
        prompt_variant_table as prompt_variant_table,
    )
    from evoforge.evolve.mining._stats import (
        CHECKPOINTS as CHECKPOINTS,
        STATUS_LABELS as STATUS_LABELS,
        checkpoints as checkpoints,
        compare_runs as compare_runs,
        cost_text as cost_text,
        run_stats as run_stats,
        run_summary as run_summary,
        step_dict as step_dict,
    )
    from evoforge.evolve.mining._suites import (
        ENDED as ENDED,
        SuiteTaskView as SuiteTaskView,
        SuiteView as SuiteView,
        gain_of as gain_of,
        suite_view as suite_view,
    )
    from evoforge.evolve.mining._view import (
        RunView as RunView,
        arrow as arrow,
        fmt as fmt,
        run_view as run_view,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
