"""A session's running statistics: what the progress display shows and benchmarks read."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from evoforge.evolve.proposals import PoolStats
    from evoforge.problems import Objective


class Progress(Protocol):
    def update(self, snapshot: Snapshot) -> None: ...


@dataclass
class Snapshot:
    """What the progress display shows; also the controller's running statistics."""

    run_id: str
    budget: int
    objective: Objective | None = None  # what best_score is of (oriented: bigger is better)
    evaluations: int = 0
    attempts: int = 0
    duplicates: int = 0
    best_score: float | None = None
    best_program_id: str | None = None
    status_counts: Counter[str] = field(default_factory=Counter)
    island_best: dict[int, float | None] = field(default_factory=dict)
    session_started: float = field(default_factory=time.monotonic)
    session_evaluations: int = 0
    model_errors: int = 0
    model_calls: int = 0  # answered or failed for good (retries not counted again)
    retries: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0  # known cost only; calls of unknown price are counted apart
    unpriced_calls: int = 0

    @property
    def evals_per_s(self) -> float:
        elapsed = time.monotonic() - self.session_started
        return self.session_evaluations / elapsed if elapsed > 0 else 0.0


@dataclass
class EngineTimings:
    """Per-candidate engine costs, for benchmarks.

    ``overhead_s``: wall time on the controller's loop outside proposals and evaluations
    (selection, prompt context, commit); ``model_s``: model call latencies; ``eval_s``:
    evaluation times; ``prompt_cpu_s`` and ``edit_cpu_s``: CPU the proposal workers spent
    building each prompt, and applying each answer and checking its syntax. ``proposals``:
    the proposal workers' totals, filled in when the session ends.
    """

    overhead_s: list[float] = field(default_factory=list)
    model_s: list[float] = field(default_factory=list)
    eval_s: list[float] = field(default_factory=list)
    eval_busy_s: float = 0.0
    prompt_cpu_s: list[float] = field(default_factory=list)
    edit_cpu_s: list[float] = field(default_factory=list)
    proposals: PoolStats | None = None
    first_proposal_at: float | None = None  # time.monotonic() when the first request went out


@dataclass(frozen=True)
class SessionReport:
    status: str  # finished | stopped | failed
    reason: str
    evaluations: int
    best_score: float | None
    best_program_id: str | None
