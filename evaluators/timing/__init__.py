"""Timing with benchmark hygiene, for evaluators that measure speed on a CPU.

:func:`interleaved_wall` times a candidate against a baseline in alternation (ABAB) and
:func:`compare` accepts an improvement only above max(1 %, 3 × stderr); the CPU timing option of
the ``python`` evaluator (``options = {"cpu_timing": "callgrind" | "wall"}``) measures in a
fresh runner process (``python -m evoforge.evaluators.timing``), and
:func:`callgrind_instructions` gives exactly repeatable instruction counts.
"""

from evoforge.evaluators.timing._cpu import (
    METRICS,
    MODES,
    CallgrindError,
    callgrind_instructions,
    measure,
    timing_mode,
    unmeasurable,
    valgrind_unavailable,
)
from evoforge.evaluators.timing._wall import (
    MIN_IMPROVEMENT,
    NOISE_FACTOR,
    WallComparison,
    compare,
    interleaved_wall,
    iqr,
)

__all__ = [
    # wall time
    "MIN_IMPROVEMENT",
    "NOISE_FACTOR",
    "WallComparison",
    "compare",
    "interleaved_wall",
    "iqr",
    # the CPU timing option
    "METRICS",
    "MODES",
    "CallgrindError",
    "callgrind_instructions",
    "measure",
    "timing_mode",
    "unmeasurable",
    "valgrind_unavailable",
]
