"""The functions a native spec shares with others: tests drawn from fixed seeds, metrics
scored as measured, baselines measured from the seed.

A PIE-style spec declares its settings and one function that draws a case; these make the rest::

    def _case(rng, size):  # -> (stdin, expected stdout)
        ...

    tests = generated_tests(_case, seed=1, count=4, size=300)
    held_out_tests = generated_tests(_case, seed=2, count=2, size=600)
    evaluate = evaluate_held_out = as_measured
    baselines = seed_baselines_of(__file__)
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

Case = Callable[[random.Random, int], tuple[str, str]]
"""Draws one ``(stdin, expected stdout)`` case of about ``size`` from ``rng``."""


def generated_tests(
    case: Case, *, seed: int, count: int, size: int
) -> Callable[[], list[tuple[str, str]]]:
    """A ``tests()`` function: ``count`` cases drawn by ``case`` from ``random.Random(seed)``,
    so every host (and every run) checks the same cases."""

    def tests() -> list[tuple[str, str]]:
        rng = random.Random(seed)
        return [case(rng, size) for _ in range(count)]

    tests.__doc__ = f"{count} cases of size {size}, drawn from seed {seed}."
    return tests


def as_measured(metrics: dict[str, Any]) -> dict[str, Any]:
    """``evaluate()`` of a spec whose objectives are the measure's metrics themselves."""
    return metrics


def seed_baselines_of(spec_file: str | Path) -> Callable[[], dict[str, dict[str, float]]]:
    """A ``baselines()`` function: the seed and the seed at ``-O3``, measured once per session
    (:func:`~evoforge.evaluators.native.seed_baselines`)."""

    def baselines() -> dict[str, dict[str, float]]:
        from evoforge.evaluators.native._baselines import seed_baselines

        return seed_baselines(spec_file)

    return baselines
