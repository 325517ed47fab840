"""A run's history: its best score over evaluations, and what its attempts did over time.

What the dashboard's run page, ``evoforge stats`` and ``evoforge compare`` plot. It reads the
run's attempts in ``seq`` order (:func:`~evoforge.archive.timeline_rows`, the entries of
``idx_programs_timeline``) and nothing else: one pass, about 0.1 to 0.3 s for a run of 100k
attempts (``bench/dashboard_load.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from evoforge.archive import Status, ids_by_seq, timeline_rows

if TYPE_CHECKING:
    from evoforge.archive import Archive

# Bucket widths in seconds, from which the smallest giving at most MAX_BUCKETS is chosen.
_WIDTHS = (5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
MAX_BUCKETS = 120
"""At most this many time buckets (more only for runs longer than 120 days)."""


@dataclass(frozen=True)
class Improvement:
    """A program that beat every earlier one (of the run, or of its island), in ``seq`` order.

    Attributes:
        evaluation: evaluations spent up to and including this attempt, in ``seq`` order.
        seq: its attempt number.
        island: the island that produced it.
        score: its score (oriented so bigger is better, as stored).
        program_id: its id.
    """

    evaluation: int
    seq: int
    island: int
    score: float
    program_id: str


@dataclass(frozen=True)
class Bucket:
    """Attempts recorded in one time bucket ``[start, start + Timeline.bucket_s)``.

    Attributes:
        start: Unix time the bucket begins.
        evaluations: attempts in it that consumed an evaluation.
        statuses: attempts in it per status (only statuses that occur).
    """

    start: float
    evaluations: int
    statuses: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Timeline:
    """A run's progress (see :func:`timeline`).

    Attributes:
        best: the run's successive bests: each program that beat every earlier one.
        islands: the same per island (each island's own successive bests).
        bucket_s: width of the time buckets in seconds (5 s to a day, so the span from the
            first attempt to the last is at most :data:`MAX_BUCKETS` buckets); bucket ``k``
            starts ``k * bucket_s`` after the first attempt.
        buckets: the non-empty buckets in time order (buckets with no attempt are left out:
            a run stopped for a night has a gap, not hundreds of zeros).
        first_at: Unix time of the first attempt; None for a run with none.
        last_at: Unix time of the last attempt; None for a run with none.
    """

    best: tuple[Improvement, ...]
    islands: dict[int, tuple[Improvement, ...]]
    bucket_s: float
    buckets: tuple[Bucket, ...]
    first_at: float | None
    last_at: float | None

    def best_at(self, evaluation: int) -> Improvement | None:
        """The best program after ``evaluation`` evaluations; None before the first score."""
        found = None
        for step in self.best:
            if step.evaluation > evaluation:
                break
            found = step
        return found


def bucket_width(span_s: float) -> float:
    """The smallest of the round widths (5 s, 10 s, ... 1 day) that cuts ``span_s`` into at
    most :data:`MAX_BUCKETS` buckets; a whole number of days beyond that."""
    for width in _WIDTHS:
        if span_s / width < MAX_BUCKETS:
            return float(width)
    return float(86400 * math.ceil(span_s / 86400 / MAX_BUCKETS + 1e-9))


def timeline(archive: Archive, run_id: str) -> Timeline:
    """The run's successive bests (overall and per island) by evaluation, and its attempts
    per status in time buckets: what its progress charts show.

    Raises:
        ArchiveError: there is no such run.
    """
    rows = timeline_rows(archive, run_id)
    # One pass in seq order: this plain loop is faster than SQLite's window functions here
    # (they sort for PARTITION BY).
    evaluated = {str(s) for s in Status if s.evaluated}
    evaluation = 0
    run_best: float | None = None
    island_best: dict[int, float] = {}
    steps: list[tuple[int, int, int, float, bool]] = []  # evaluation, seq, island, score, run
    times: list[float] = []
    statuses: list[str] = []
    evaluations_used: list[int] = []
    for seq, status, island, score, created_at, used in rows:
        if status not in evaluated:
            used = 0
        evaluation += used  # 1, plus knob-tuning trials
        if score is not None:
            best = island_best.get(island)
            if best is None or score > best:
                island_best[island] = score
                beats_run = run_best is None or score > run_best
                if beats_run:
                    run_best = score
                steps.append((evaluation, seq, island, score, beats_run))
        times.append(created_at)
        statuses.append(status)
        evaluations_used.append(used)
    ids = ids_by_seq(archive, run_id, [step[1] for step in steps])
    best_steps: list[Improvement] = []
    islands: dict[int, list[Improvement]] = {}
    for evaluation, seq, island, score, beats_run in steps:
        step = Improvement(evaluation, seq, island, score, ids[seq])
        islands.setdefault(island, []).append(step)
        if beats_run:
            best_steps.append(step)
    width, buckets = _buckets(times, statuses, evaluations_used)
    return Timeline(
        best=tuple(best_steps),
        islands={i: tuple(found) for i, found in sorted(islands.items())},
        bucket_s=width,
        buckets=buckets,
        first_at=min(times) if times else None,
        last_at=max(times) if times else None,
    )


def _buckets(
    times: list[float], statuses: list[str], used: list[int]
) -> tuple[float, tuple[Bucket, ...]]:
    """Attempts per status in time buckets, and the evaluations they used (``used``: 0 for
    attempts never evaluated), counted with numpy."""
    if not times:
        return float(_WIDTHS[0]), ()
    at = np.asarray(times, dtype=float)
    first = float(at.min())
    width = bucket_width(float(at.max()) - first)
    index = ((at - first) // width).astype(np.int64)
    names, codes = np.unique(np.asarray(statuses), return_inverse=True)
    counts = np.zeros((int(index.max()) + 1, len(names)), dtype=np.int64)
    np.add.at(counts, (index, codes), 1)
    evaluations = np.zeros(len(counts), dtype=np.int64)
    np.add.at(evaluations, index, np.asarray(used, dtype=np.int64))
    found = []
    for k in np.flatnonzero(counts.sum(axis=1)):
        row = {str(names[j]): int(counts[k, j]) for j in np.flatnonzero(counts[k])}
        found.append(
            Bucket(
                first + int(k) * width,
                int(evaluations[k]),
                row,
            )
        )
    return width, tuple(found)
