"""Parent-selection strategies over one island's elites.

A strategy is ``strategy(scores, rng, **options) -> index``: ``scores`` are the elites' primary
scores (bigger is better) in a fixed order (by cell), ``rng`` a seeded numpy Generator. Keeping
the signature this small lets third-party strategies plug in through
``register_selection_strategies``. A strategy that also takes an ``instances`` keyword gets each
elite's per-instance scores (``{instance: score}``, bigger is better; see
:class:`~evoforge.problems.InstanceScores`), for problems that declare them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

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


def pareto_instances(
    scores: Sequence[float],
    rng: np.random.Generator,
    instances: Sequence[Mapping[str, float]] = (),
) -> int:
    """GEPA's rule: a parent among the elites that are best on at least one instance, drawn
    with a weight equal to the number of instances it leads on.

    Every elite scoring the best on an instance leads on it (ties lead together). An elite
    whose every lead is shared with another remaining leader is dominated and dropped, the
    lowest aggregate first (GEPA's ``remove_dominated_programs``), so a program that is
    never alone at the top of anything cannot crowd out the ones that are. With no
    per-instance scores, the aggregate is the only instance: the best elite (ties drawn).

    Cost: O(elites x instances) per selection.
    """
    fronts: list[set[int]] = []
    names = sorted({name for table in instances for name in table})
    for name in names:
        values = {i: table[name] for i, table in enumerate(instances) if name in table}
        best = max(values.values())
        fronts.append({i for i, v in values.items() if v == best})
    if not fronts:
        best_score = max(scores)
        fronts = [{i for i, s in enumerate(scores) if s == best_score}]
    dominated: set[int] = set()
    for candidate in sorted({i for f in fronts for i in f}, key=lambda i: (scores[i], -i)):
        if all(
            any(j != candidate and j not in dominated for j in f) for f in fronts if candidate in f
        ):
            dominated.add(candidate)
    leads = Counter(i for f in fronts for i in f if i not in dominated)
    leaders = sorted(leads)
    weights = np.array([leads[i] for i in leaders], dtype=float)
    return leaders[int(rng.choice(len(leaders), p=weights / weights.sum()))]


BUILTIN_STRATEGIES = {
    "uniform": uniform,
    "tournament": tournament,
    "rank": rank,
    "fitness_weighted": fitness_weighted,
    "pareto_instances": pareto_instances,
}
