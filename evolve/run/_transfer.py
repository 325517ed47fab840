"""Cross-task transfer in a suite: which tasks are related, and what one offers another.

Two tasks are related when they declare the same ``family`` (``circle_packing`` and
``circle_packing_32``), or when their seeds' evolving code is similar: the Jaccard similarity of
their token shingles (the novelty filter's, :func:`evoforge.islands.fingerprint`) is at least
``[suite] transfer_similarity``. A task's prompt then offers, at ``[suite] transfer_rate``, the
best program of a related task that has improved on its seed, labelled as another task's (see
:data:`~evoforge.evolve.prompts.FOREIGN_HEADING`); the child records it
(``Program.transfer_from``), so the improvement rates with and without are read from the
archive (``evoforge stats``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from evoforge.evolve.prompts import Foreign
from evoforge.islands import fingerprint, jaccard

if TYPE_CHECKING:
    from evoforge.archive import Archive
    from evoforge.evolve.search import TransferSource
    from evoforge.problems import Problem


def related_tasks(problems: Sequence[Problem], similarity: float) -> list[list[int]]:
    """For each task, the others it is related to (same family, or seeds at least
    ``similarity`` alike), the most similar first.

    Costs one fingerprint per seed and one comparison per pair.
    """
    shingles = [fingerprint(p.seed_source, p.language).shingles for p in problems]
    related: list[list[int]] = []
    for i, problem in enumerate(problems):
        scored = []
        for j, other in enumerate(problems):
            if j == i:
                continue
            alike = jaccard(shingles[i], shingles[j])
            family = bool(problem.family) and problem.family == other.family
            if family or alike >= similarity:
                scored.append((-alike, j))
        related.append([j for _, j in sorted(scored)])
    return related


def transfer_source(
    archive: Archive,
    related: Sequence[int],
    task_run: Callable[[int], tuple[str, str | None]],
    rate: float,
) -> TransferSource | None:
    """What task's prompts are offered: with probability ``rate``, the best program of one of
    the ``related`` tasks (drawn uniformly among those that improved on their seed).

    ``task_run(j)``: task ``j``'s problem name and run id (None before it has one). None when
    the task has no related task.
    """
    if not related or rate <= 0:
        return None

    def offer(rng: np.random.Generator) -> Foreign | None:
        if float(rng.random()) >= rate:
            return None
        offers = []
        for j in related:
            name, run_id = task_run(j)
            if run_id is None:
                continue
            found = archive.conn.execute(
                "SELECT best_program_id FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            best = found[0] if found else None
            seed = next(archive.programs(run_id), None) if best else None
            if best and seed is not None and seed.id != best:
                offers.append((name, run_id, best))
        if not offers:
            return None
        name, run_id, best = offers[int(rng.integers(len(offers)))]
        return Foreign(name, run_id, archive.get_program(run_id, best))

    return offer
