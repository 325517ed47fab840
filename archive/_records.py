"""Plain values read from the archive: runs, grid cells, island counters, events, LLM calls."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class RunStatus(enum.StrEnum):
    """Life cycle of a run, stored in ``runs.status``."""

    RUNNING = "running"
    STOPPED = "stopped"  # stopped cleanly before its budget (Ctrl-C, stop file); resumable
    FINISHED = "finished"  # a budget was reached
    FAILED = "failed"  # the engine itself failed; see stop_reason


@dataclass(frozen=True)
class RunInfo:
    """One row of ``runs``.

    Attributes:
        id: readable unique id, e.g. ``circle_packing-20261122-031500-a1b2``.
        problem: problem name.
        problem_path: where the problem spec was loaded from.
        config: the run configuration, as given to :meth:`Archive.create_run`.
        seed: the run's RNG seed.
        status: see :class:`RunStatus`.
        stop_reason: why it stopped or failed; None while running.
        created_at: Unix time it was created.
        updated_at: Unix time of the last change to this row.
        next_seq: the next attempt number to hand out.
        evaluations: attempts that consumed an evaluation (``Status.evaluated``).
        attempts: all stored attempts.
        duplicates: attempts stored as ``duplicate``, not evaluated: exact copies of a
            program of the run and the equivalents the novelty filter rejected (runs
            recorded before archive migration m009 counted the copies alone; m009 raised
            them to their ``duplicate`` rows).
        elapsed_s: active wall time over all sessions of the run.
        best_score: best score so far; None before the first ok program.
        best_program_id: id of the program with ``best_score``.
        tokens_in: prompt tokens over all LLM calls.
        tokens_out: completion tokens over all LLM calls.
        cost_usd: sum of the known LLM costs (calls of unknown cost add nothing).

    Example::

        with evoforge.open_archive("runs.db") as archive:
            for run in archive.runs():
                print(run.id, run.status, run.evaluations, run.best_score)
    """

    id: str
    problem: str
    problem_path: str
    config: dict[str, Any]
    seed: int
    status: RunStatus
    stop_reason: str | None
    created_at: float
    updated_at: float
    next_seq: int
    evaluations: int
    attempts: int
    duplicates: int
    elapsed_s: float
    best_score: float | None
    best_program_id: str | None
    tokens_in: int
    tokens_out: int
    cost_usd: float


@dataclass(frozen=True)
class Elite:
    """An occupied MAP-Elites cell: the program holding it, its score, and its ``seq``."""

    cell: int
    program_id: str
    score: float
    seq: int


@dataclass(frozen=True)
class IslandState:
    """The counters an island keeps between candidates (all zero / None for a new island).

    Attributes:
        accepted_since_migration: programs accepted into its grid since it last sent migrants.
        evals_since_improvement: evaluations since its best score last improved.
        best_score: its best score so far; None before the first ok program.
        resets: times it was reset.
        migrations: times it sent migrants.
        evals_since_migration: evaluations on it since it last sent migrants (or was reset).
    """

    accepted_since_migration: int = 0
    evals_since_improvement: int = 0
    best_score: float | None = None
    resets: int = 0
    migrations: int = 0
    evals_since_migration: int = 0


@dataclass(frozen=True)
class Event:
    """One row of ``events``: something that happened to a run or an island."""

    id: int
    run_id: str
    kind: str
    seq: int | None = None
    island: int | None = None
    data: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0


@dataclass(frozen=True)
class LlmCall:
    """One row of ``llm_calls``: one attempt of a model call. Token counts and cost are None
    when unknown (never 0).

    ``status`` is ``ok``, ``error`` (the call's last failed attempt) or ``retry`` (a failed
    attempt that was tried again); ``attempt`` is 1-based; ``error_kind``, ``status_code``,
    ``retry_after_s`` and ``waited_s`` describe a failed attempt (None when unknown);
    ``request_key`` is the key of the request an answered call was sent for (None when the
    run does not key requests).
    """

    id: int
    run_id: str
    seq: int
    model: str
    latency_s: float
    status: str
    program_id: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    error: str | None = None
    created_at: float = 0.0
    attempt: int = 1
    error_kind: str | None = None
    status_code: int | None = None
    retry_after_s: float | None = None
    waited_s: float | None = None
    request_key: bytes | None = None
