"""Benchmark hygiene shared by every evaluator that times things: interleaved wall-clock runs.

Two programs timed one after the other drift apart with the machine (frequency scaling,
neighbours, caches warming): timing them in alternation (ABAB...) exposes both to the same
drift. :func:`interleaved_wall` does that, discards warm-ups, and reports medians, IQRs and
whether the difference is larger than the noise: an improvement counts only above
max(1 %, 3 x its standard error), so a 2 % "win" measured with 5 % noise is not reported as one.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

MIN_IMPROVEMENT = 0.01
"""The smallest relative improvement ever called significant (1 %)."""
NOISE_FACTOR = 3.0
"""An improvement must also exceed this many standard errors of the measured ratio."""


@dataclass(frozen=True)
class WallComparison:
    """Wall-clock samples of ``a`` and ``b`` taken in alternation, and what they show.

    Attributes:
        a_s, b_s: the timed samples in seconds (warm-ups excluded), in the order taken.
        median_a_s, median_b_s: their medians.
        iqr_a_s, iqr_b_s: their interquartile ranges (the spread).
        speedup: ``median_b_s / median_a_s``: above 1 when ``a`` is faster.
        stderr: standard error of the log of the paired ratios ``b_i / a_i`` (about the
            relative standard error of ``speedup``).
        significant: ``a`` is faster than ``b`` by more than max(1 %, 3 x ``stderr``).
    """

    a_s: tuple[float, ...]
    b_s: tuple[float, ...]
    median_a_s: float
    median_b_s: float
    iqr_a_s: float
    iqr_b_s: float
    speedup: float
    stderr: float
    significant: bool

    @property
    def threshold(self) -> float:
        """The relative improvement ``a`` had to exceed to be significant."""
        return max(MIN_IMPROVEMENT, NOISE_FACTOR * self.stderr)

    def to_dict(self) -> dict[str, Any]:
        return {
            "median_a_s": self.median_a_s,
            "median_b_s": self.median_b_s,
            "iqr_a_s": self.iqr_a_s,
            "iqr_b_s": self.iqr_b_s,
            "speedup": self.speedup,
            "stderr": self.stderr,
            "significant": self.significant,
            "repeats": len(self.a_s),
        }


def interleaved_wall(
    run_a: Callable[[], Any],
    run_b: Callable[[], Any],
    *,
    repeats: int = 10,
    warmups: int = 2,
    self_timed: bool = False,
    timer: Callable[[], float] = time.perf_counter,
) -> WallComparison:
    """Time ``run_a`` and ``run_b`` alternately (A B A B ...) and compare them.

    Args:
        run_a: the candidate (the one hoped to be faster).
        run_b: the baseline.
        repeats: timed runs of each (at least 3; 10 or more for a decision).
        warmups: untimed runs of each first (caches, JIT, lazy imports).
        self_timed: the runs return their own duration in seconds (e.g. measured inside a
            child process, without its start-up) instead of being timed around the call.
        timer: the clock for runs that are not self-timed.

    Raises:
        ValueError: ``repeats`` < 3, ``warmups`` < 0, or a self-timed run returned something
            other than a positive finite number of seconds.
    """
    if repeats < 3:
        raise ValueError(f"repeats must be at least 3 to estimate a spread, not {repeats}")
    if warmups < 0:
        raise ValueError(f"warmups must be 0 or more, not {warmups}")

    def once(run: Callable[[], Any]) -> float:
        start = timer()
        value = run()
        elapsed = timer() - start
        if not self_timed:
            return elapsed
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not (math.isfinite(value) and value > 0)
        ):
            raise ValueError(
                f"a self-timed run must return its duration in seconds (> 0); it returned {value!r}"
            )
        return float(value)

    for _ in range(warmups):
        once(run_a)
        once(run_b)
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeats):
        a.append(once(run_a))
        b.append(once(run_b))
    return compare(a, b)


def compare(a: Sequence[float], b: Sequence[float]) -> WallComparison:
    """Compare paired samples of ``a`` and ``b`` (see :class:`WallComparison`)."""
    if len(a) != len(b) or len(a) < 3:
        raise ValueError(f"need two equal-length sample lists of 3 or more, got {len(a)}, {len(b)}")
    median_a, median_b = statistics.median(a), statistics.median(b)
    floor = 1e-12  # a zero sample would make a ratio infinite
    logs = [math.log(max(y, floor) / max(x, floor)) for x, y in zip(a, b, strict=True)]
    stderr = statistics.stdev(logs) / math.sqrt(len(logs))
    speedup = max(median_b, floor) / max(median_a, floor)
    significant = speedup - 1.0 > max(MIN_IMPROVEMENT, NOISE_FACTOR * stderr)
    return WallComparison(
        a_s=tuple(a),
        b_s=tuple(b),
        median_a_s=median_a,
        median_b_s=median_b,
        iqr_a_s=iqr(a),
        iqr_b_s=iqr(b),
        speedup=speedup,
        stderr=stderr,
        significant=significant,
    )


def iqr(samples: Sequence[float]) -> float:
    """Interquartile range (inclusive method, so 3 samples are enough)."""
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return q3 - q1
