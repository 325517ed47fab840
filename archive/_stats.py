"""Summary statistics of one MAP-Elites grid."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArchiveStats:
    """Statistics of one grid (an island's, or the run's global grid ``island=-1``).

    Attributes:
        num_elites: occupied cells.
        num_cells: cells in the grid (``Problem.num_cells``).
        coverage: ``num_elites / num_cells``, in [0, 1].
        qd_score: quality-diversity score, ``sum(score - qd_offset for each elite)``. Scores are
            oriented so bigger is better but may be negative; pass a ``qd_offset`` at or below
            the worst score a program can get so every elite adds a non-negative amount and
            filling a new cell never lowers the QD score (as in pyribs). Only compare QD scores
            computed with the same offset.
        best_score: the best elite's score; None when the grid is empty.
        mean_score: mean elite score; None when the grid is empty.
        best_program_id: id of the best elite (lowest ``seq`` among equal scores); None when
            the grid is empty.
    """

    num_elites: int
    num_cells: int
    coverage: float
    qd_score: float
    best_score: float | None
    mean_score: float | None
    best_program_id: str | None
