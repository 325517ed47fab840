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

from evoforge.evaluators.native._baselines import seed_baselines
from evoforge.evaluators.native._evaluator import REFERENCES, NativeEvaluator
from evoforge.evaluators.native._generated import as_measured, generated_tests, seed_baselines_of
from evoforge.evaluators.native._parse import cache_metrics, event_totals, mca_summary
from evoforge.evaluators.native._settings import (
    LANGUAGES,
    MEASURES,
    METRICS,
    NativeSettings,
    o3_flags,
    read_settings,
)
from evoforge.evaluators.native._tools import (
    archer_library,
    libraries_missing,
    measure_tools,
    measure_unavailable,
    qemu_unavailable,
)

__all__ = [
    # the evaluator
    "REFERENCES",
    "NativeEvaluator",
    "seed_baselines",
    # what native specs share
    "as_measured",
    "generated_tests",
    "seed_baselines_of",
    # settings
    "LANGUAGES",
    "MEASURES",
    "METRICS",
    "NativeSettings",
    "o3_flags",
    "read_settings",
    # tools and outputs
    "archer_library",
    "libraries_missing",
    "measure_tools",
    "cache_metrics",
    "event_totals",
    "mca_summary",
    "measure_unavailable",
    "qemu_unavailable",
]
