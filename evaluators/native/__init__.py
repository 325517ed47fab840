"""The ``native`` evaluator: C, C++ and Rust candidates compiled by clang-19 (rustc) and
measured by callgrind, cachegrind, llvm-mca for a named CPU, instructions under qemu-user for
another architecture, or interleaved wall time; optionally through a cascade of stages
(llvm-mca as a cheap filter, a ThreadSanitizer build) before the measurement.

- :class:`NativeEvaluator`: the evaluator plugin;
- :func:`read_settings` / :class:`NativeSettings`: what a native problem declares;
- :func:`seed_baselines`: the seed's and the seed at ``-O3``'s measures, for a spec's
  ``baselines()``;
- :func:`generated_tests`, :func:`as_measured`, :func:`seed_baselines_of`: the functions
  PIE-style specs share (tests from fixed seeds, metrics as measured, seed baselines);
- :func:`measure_tools`, :func:`libraries_missing`: a spec's ``requires`` and ``ready()``,
  so ``evoforge problems`` names a missing tool and the ``apt-get`` command that installs it;
- ``python -m evoforge.evaluators.native``: the trusted runner of one evaluation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.native._baselines import seed_baselines as seed_baselines
    from evoforge.evaluators.native._evaluator import (
        REFERENCES as REFERENCES,
        NativeEvaluator as NativeEvaluator,
    )
    from evoforge.evaluators.native._generated import (
        as_measured as as_measured,
        generated_tests as generated_tests,
        seed_baselines_of as seed_baselines_of,
    )
    from evoforge.evaluators.native._parse import (
        cache_metrics as cache_metrics,
        event_totals as event_totals,
        mca_summary as mca_summary,
    )
    from evoforge.evaluators.native._settings import (
        LANGUAGES as LANGUAGES,
        MEASURES as MEASURES,
        METRICS as METRICS,
        NativeSettings as NativeSettings,
        o3_flags as o3_flags,
        read_settings as read_settings,
    )
    from evoforge.evaluators.native._tools import (
        archer_library as archer_library,
        libraries_missing as libraries_missing,
        measure_tools as measure_tools,
        measure_unavailable as measure_unavailable,
        qemu_unavailable as qemu_unavailable,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
