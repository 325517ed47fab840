"""A run's statistics and the comparison of runs, as plain JSON-ready dicts.

The CLI (``evoforge stats``, ``compare``, ``--json``) and the dashboard show the same numbers
from the same functions. Objective values are in the objective's own direction (see
:class:`~evoforge.evolve.mining.RunView`); ``score`` fields are the archive's oriented score.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evoforge.archive import model_usage
from evoforge.evolve.mining._timeline import timeline as run_timeline
from evoforge.evolve.mining._usage import call_cost
from evoforge.evolve.mining._view import RunView, run_view

if TYPE_CHECKING:
    from evoforge.archive import Archive, RunInfo
    from evoforge.evolve.mining._timeline import Improvement, Timeline

STATUS_LABELS: dict[str, str] = {
    "duplicate": "copies or equivalents of programs of the run (not evaluated)",
}
"""What a status means where its name alone does not say it, for people reading statistics.
``duplicate`` rows are candidates identical to a program of the run (the run's
``duplicates`` counter counts these too), or that the novelty filter (``[search] novelty``)
found equivalent to, or nearly identical with, one; they used no evaluation."""

CHECKPOINTS = (1, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 25_000, 50_000, 100_000)
"""Evaluation counts at which runs are compared (up to the longest run's evaluations)."""


def run_summary(run: RunInfo, view: RunView) -> dict[str, Any]:
    """The run's row as people read it: budget used, best in its own direction, cost."""
    budget = run.config.get("budget")
    primary = view.primary
    return {
        "id": run.id,
        "problem": run.problem,
        "status": str(run.status),
        "stop_reason": run.stop_reason,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "evaluations": run.evaluations,
        "budget": budget,
        "budget_used": run.evaluations / budget if budget else None,
        "attempts": run.attempts,
        "duplicates": run.duplicates,
        "elapsed_s": run.elapsed_s or 0.0,
        "objective": None if primary is None else primary.name,
        "direction": None if primary is None else str(primary.direction),
        "best": view.value(run.best_score),
        "best_score": run.best_score,
        "best_program_id": run.best_program_id,
        "tokens_in": run.tokens_in,
        "tokens_out": run.tokens_out,
        "cost_usd": run.cost_usd,
    }


def step_dict(step: Improvement, view: RunView) -> dict[str, Any]:
    return {
        "evaluation": step.evaluation,
        "seq": step.seq,
        "island": step.island,
        "value": view.value(step.score),
        "program_id": step.program_id,
    }


def run_stats(
    archive: Archive, run: RunInfo, *, view: RunView | None = None, timeline: Timeline | None = None
) -> dict[str, Any]:
    """Everything ``evoforge stats`` shows: statuses, grid coverage and QD score, the best over
    evaluations (overall and per island), evaluation rate, tokens and cost per model, and what
    the search's filters did (``search``: the rule that located each applied diff, how many
    needed more than an exact match, candidates the novelty filter rejected unevaluated).

    ``cost``: calls per evaluation and the calls wasted by reason
    (:func:`~evoforge.evolve.mining.call_cost`; :func:`~evoforge.evolve.mining.cost_text`
    writes it as one line).

    ``novelty_rejected`` counts the candidates not evaluated as duplicates (status
    ``duplicate``: exact copies and what the novelty filter rejected); ``status_labels`` says
    what such statuses mean (:data:`STATUS_LABELS`).

    QD score is the sum of the global grid's elite scores (oriented, offset 0), as
    ``evoforge status`` reports it.
    """
    view = view or run_view(archive, run)
    timeline = timeline or run_timeline(archive, run.id)
    cells = view.num_cells
    grid = archive.stats(run.id, num_cells=cells or 1)
    islands_count = int((run.config.get("islands") or {}).get("count") or 0)
    islands = []
    for island in range(max(islands_count, 1 + max(timeline.islands, default=-1))):
        state = archive.island_state(run.id, island)
        islands.append(
            {
                "island": island,
                "best": view.value(state.best_score),
                "elites": len(archive.elites(run.id, island)),
                "resets": state.resets,
                "migrations": state.migrations,
            }
        )
    usage = model_usage(archive, run.id)  # without improvements: those join every call
    best = timeline.best[-1] if timeline.best else None
    statuses = archive.status_counts(run.id)
    matches = archive.edit_match_counts(run.id)
    minutes = (run.elapsed_s or 0.0) / 60
    return {
        **run_summary(run, view),
        "view": view.to_dict(),
        "best_evaluation": None if best is None else best.evaluation,
        "statuses": statuses,
        "search": {
            "edit_matches": matches,
            "edits_saved": sum(n for rule, n in matches.items() if rule != "exact"),
            "edits_applied": sum(matches.values()),
        },
        "status_labels": {s: STATUS_LABELS[s] for s in statuses if s in STATUS_LABELS},
        "novelty_rejected": statuses.get("duplicate", 0),
        "transfer": _transfer(archive, run.id),
        "grid": {
            "cells": cells,
            "elites": grid.num_elites,
            "coverage": grid.num_elites / cells if cells else None,
            "qd_score": grid.qd_score,
        },
        "islands": islands,
        "best_over_evaluations": [step_dict(s, view) for s in timeline.best],
        "island_best_over_evaluations": {
            str(i): [step_dict(s, view) for s in steps] for i, steps in timeline.islands.items()
        },
        "evaluations_per_minute": run.evaluations / minutes if minutes > 0 else None,
        "unpriced_calls": sum(u.unpriced for u in usage),
        "models": [u.to_dict() for u in usage],
        "cost": call_cost(archive, run.id).to_dict(),
    }


def _transfer(archive: Archive, run_id: str) -> dict[str, Any] | None:
    """Children with and without another task's elite in their prompt (a suite's task with
    cross-task transfer on), and each group's improvement rate; None when no child had one."""
    outcomes = archive.transfer_outcomes(run_id)
    if not outcomes[True][0]:
        return None
    return {
        label: {"children": n, "improved": better, "rate": better / n if n else None}
        for label, (n, better) in (("with", outcomes[True]), ("without", outcomes[False]))
    }


def checkpoints(longest: int) -> list[int]:
    """The :data:`CHECKPOINTS` up to ``longest``."""
    return [c for c in CHECKPOINTS if c <= longest]


def compare_runs(archive: Archive, runs: list[RunInfo]) -> dict[str, Any]:
    """Runs side by side: best at the same evaluation counts, evaluations each needed to
    reach the weakest final best, statuses (shares), cost and tokens.

    ``comparable`` is False when the runs rank by different objectives (other problems, or
    hosts that measure different things): their scores then mean different things.
    """
    views = [run_view(archive, run) for run in runs]
    timelines = [run_timeline(archive, run.id) for run in runs]
    primaries = {(v.primary.name, str(v.primary.direction)) if v.primary else None for v in views}
    longest = max((run.evaluations for run in runs), default=0)
    marks = checkpoints(longest)
    comparable = len(primaries) == 1 and None not in primaries
    finals = [r.best_score for r in runs if r.best_score is not None]
    # Only runs that score the same thing share a target.
    target = min(finals) if comparable and len(finals) == len(runs) and finals else None
    rows = []
    for run, view, timeline in zip(runs, views, timelines, strict=True):
        statuses = archive.status_counts(run.id)
        total = sum(statuses.values())
        at = {}
        for mark in marks:
            step = timeline.best_at(mark) if mark <= run.evaluations else None
            at[str(mark)] = None if step is None else view.value(step.score)
        reach = None
        if target is not None:
            reach = next((s.evaluation for s in timeline.best if s.score >= target), None)
        rows.append(
            {
                **run_summary(run, view),
                "best_at": at,
                "evaluations_to_reach_target": reach,
                "statuses": statuses,
                "status_shares": {k: v / total for k, v in statuses.items()} if total else {},
                "best_over_evaluations": [step_dict(s, view) for s in timeline.best],
            }
        )
    primary = views[0].primary if views else None
    return {
        "comparable": comparable,
        "objective": None if primary is None else primary.name,
        "direction": None if primary is None else str(primary.direction),
        "checkpoints": marks,
        "target": None if target is None or not views else views[0].value(target),
        "runs": rows,
    }
