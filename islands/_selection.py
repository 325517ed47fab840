"""Parent-selection strategies over one island's elites.

A strategy is ``strategy(scores, rng, **options) -> index``: ``scores`` are the elites' primary
scores (bigger is better) in a fixed order (by cell), ``rng`` a seeded numpy Generator. Keeping
the signature this small lets third-party strategies plug in through
``register_selection_strategies``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def uniform(scores: Sequence[float], rng: np.random.Generator) -> int:
    """Every elite equally likely: maximal exploration of the grid."""
    return int(rng.integers(len(scores)))


def tournament(scores: Sequence[float], rng: np.random.Generator, size: int = 3) -> int:
    """Best of ``size`` elites drawn with replacement; ties go to the earlier one."""
    drawn = rng.integers(len(scores), size=size)
    return int(max(drawn, key=lambda i: (scores[i], -i)))


def rank(scores: Sequence[float], rng: np.random.Generator, alpha: float = 1.0) -> int:
    """Power law over rank (FunSearch-style): P(rank r) is proportional to r^-alpha, best is r=1."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    weights = np.arange(1, len(order) + 1, dtype=float) ** -alpha
    return order[int(rng.choice(len(order), p=weights / weights.sum()))]


def fitness_weighted(
    scores: Sequence[float], rng: np.random.Generator, temperature: float = 0.1
) -> int:
    """Softmax over scores normalised to [0, 1]; lower temperature is greedier."""
    values = np.asarray(scores, dtype=float)
    spread = values.max() - values.min()
    normalised = (values - values.min()) / spread if spread > 0 else np.zeros_like(values)
    logits = normalised / temperature
    weights = np.exp(logits - logits.max())
    return int(rng.choice(len(values), p=weights / weights.sum()))


BUILTIN_STRATEGIES = {
    "uniform": uniform,
    "tournament": tournament,
    "rank": rank,
    "fitness_weighted": fitness_weighted,
}
