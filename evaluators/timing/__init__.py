"""Timing with benchmark hygiene, for evaluators that measure speed on a CPU.

:func:`interleaved_wall` times a candidate against a baseline in alternation (ABAB) and
:func:`compare` accepts an improvement only above max(1 %, 3 × stderr); the CPU timing option of
the ``python`` evaluator (``options = {"cpu_timing": "callgrind" | "wall"}``) measures in a
fresh runner process (``python -m evoforge.evaluators.timing``), and
:func:`callgrind_instructions` gives exactly repeatable instruction counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.timing._cpu import (
        METRICS as METRICS,
        MODES as MODES,
        CallgrindError as CallgrindError,
        callgrind_instructions as callgrind_instructions,
        measure as measure,
        timing_mode as timing_mode,
        unmeasurable as unmeasurable,
        valgrind_unavailable as valgrind_unavailable,
    )
    from evoforge.evaluators.timing._wall import (
        MIN_IMPROVEMENT as MIN_IMPROVEMENT,
        NOISE_FACTOR as NOISE_FACTOR,
        WallComparison as WallComparison,
        compare as compare,
        interleaved_wall as interleaved_wall,
        iqr as iqr,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
