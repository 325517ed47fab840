"""Mining a run: its numbers in each objective's own direction, statistics, timelines,
failures, what its model calls bought, comparison of runs and export of programs, shared by the
CLI (``evoforge stats``, ``failures``, ``compare``, ``export``...) and the dashboard
(``evoforge ui``).

The archive answers with stored rows and counts; this package says what they mean, once:

- :func:`run_stats`, :func:`compare_runs`, :func:`timeline`: progress and statistics;
- :func:`failure_groups`, :func:`failure_message`, :func:`failure_reason` and
  :func:`mask_numbers` (the one rule by which two errors that differ in their numbers are the
  same); :func:`model_failures` and :func:`failure_hint` for failed model calls, and
  :func:`read_refusal` for the window a server names when it refuses a prompt;
- :func:`call_cost`: calls per evaluation and the calls wasted, by reason.

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
    from evoforge.evolve.mining._failures import (
        NO_MESSAGE as NO_MESSAGE,
        SIGNATURE_CHARS as SIGNATURE_CHARS,
        FailureGroup as FailureGroup,
        failure_groups as failure_groups,
        failure_message as failure_message,
        failure_reason as failure_reason,
        mask_numbers as mask_numbers,
        signature as signature,
    )
    from evoforge.evolve.mining._model_failures import (
        OFFLINE_HINT as OFFLINE_HINT,
        ModelFailure as ModelFailure,
        failed_calls_summary as failed_calls_summary,
        failure_hint as failure_hint,
        model_failures as model_failures,
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
    from evoforge.evolve.mining._refusal import (
        ContextRefusal as ContextRefusal,
        read_refusal as read_refusal,
    )
    from evoforge.evolve.mining._stats import (
        CHECKPOINTS as CHECKPOINTS,
        STATUS_LABELS as STATUS_LABELS,
        checkpoints as checkpoints,
        compare_runs as compare_runs,
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
    from evoforge.evolve.mining._timeline import (
        MAX_BUCKETS as MAX_BUCKETS,
        Bucket as Bucket,
        Improvement as Improvement,
        Timeline as Timeline,
        bucket_width as bucket_width,
        timeline as timeline,
    )
    from evoforge.evolve.mining._usage import (
        WASTE_REASONS as WASTE_REASONS,
        CallCost as CallCost,
        call_cost as call_cost,
        cost_text as cost_text,
    )
    from evoforge.evolve.mining._view import (
        RunView as RunView,
        arrow as arrow,
        fmt as fmt,
        run_view as run_view,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
