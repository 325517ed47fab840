"""Knob tuning: after a candidate is scored, a real optimiser tunes its declared knobs.

A problem opts in with ``tuning = {"trials": 20}`` (see :class:`~evoforge.problems.Tuning`);
a candidate opts in by declaring knobs (:mod:`evoforge.evaluators.tuning._knobs`). Then
:func:`evaluate_tuned` evaluates the candidate as written (the *untuned* result), and, when
that is ``ok``, asks optuna's TPE sampler (seeded with the untuned values and score) for up to
``trials`` more settings within a trust region around the current values (±15 % of each
knob's range; :func:`_distribution` says why). Each trial is an ordinary evaluation of
the program with the knobs' literals replaced, run by the same evaluator in the same sandbox
and the same evaluation slot, so trials are evaluations: the result says how many it used
(:attr:`~evoforge.archive.EvalResult.evaluations`), and the controller takes each one from
the run's budget before it runs (:data:`TRIAL_BUDGET`).

The result is the best setting's: its source has the tuned literals written back
(:attr:`~evoforge.archive.EvalResult.source`), so the archive stores, and the model next
sees, the program that was scored. Metrics keep the untuned score (``untuned_<objective>``),
the number of trials and the tuned values (``knobs``); the ``tuning`` artifact says what
changed.

Which candidates, which knobs: with ``tuning["only_improved"]`` (the default) only a
candidate that scores at least as well as its parent is tuned, so trials refine promising
programs instead of every edit; with ``tuning["knobs"] = k`` each candidate tunes k of its
knobs, chosen at random (seeded by the source): TPE learns far more from a dozen trials in 3
dimensions than in 20.

With ``tuning["stage"]``, trials run the cascade only up to that stage and optimise one of
its metrics (cheap trials for expensive problems); the winner, if it is not the untuned
program, is then evaluated in full once more (one more evaluation), and kept only if its
score beats the untuned one.

Cost: optuna's import (about 0.5 s, once per process) and TPE's proposal (about 1-5 ms per
trial for tens of trials), on top of the trials themselves.
"""

from __future__ import annotations

import ast
import asyncio
import contextvars
import hashlib
import logging
import math
import random
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from evoforge.archive import EvalResult, Status
from evoforge.evaluators.tuning._changed import changed_constants
from evoforge.evaluators.tuning._knobs import Knob, KnobError, find_knobs, literal, write_back
from evoforge.problems import Tuning

if TYPE_CHECKING:
    from evoforge.problems import Problem

log = logging.getLogger("evoforge")

Evaluate = Callable[[str, "str | None"], Awaitable[EvalResult]]
"""Evaluates a source: in full (``None``), or the cascade up to the named stage."""


class TrialBudget:
    """How a run hands out evaluations for trials: :meth:`take` asks for one more.

    The controller sets one per candidate in :data:`TRIAL_BUDGET` (a context variable, so
    it reaches the evaluator through the candidate's task and nothing else); without one,
    every declared trial runs.
    """

    def __init__(
        self,
        take: Callable[[], bool],
        parent_score: float | None = None,
        parent_source: str | None = None,
        changed_trials: int = 0,
    ) -> None:
        self._take = take
        self.taken = 0
        self.parent_score = parent_score
        """The parent's score (bigger is better); with ``tuning["only_improved"]``, a
        candidate that scores below it is not tuned."""
        self.parent_source = parent_source
        """The parent's program: what the candidate's edit changed is read against it."""
        self.changed_trials = changed_trials
        """Trials for the constants the edit changed, in a problem that declares no tuning
        (``[search] tune_changed``; 0: none)."""

    def take(self) -> bool:
        """Reserve one evaluation for a trial; False when the run's budget has no room."""
        if self._take():
            self.taken += 1
            return True
        return False


TRIAL_BUDGET: contextvars.ContextVar[TrialBudget | None] = contextvars.ContextVar(
    "evoforge_trial_budget", default=None
)


def tuning_unavailable() -> str:
    """Why knobs cannot be tuned here ("" when optuna is installed)."""
    try:
        import optuna  # noqa: F401
    except ImportError:
        return "optuna is not installed (pip install 'evoforge[tune]')"
    return ""


async def evaluate_tuned(problem: Problem, source: str, evaluate: Evaluate) -> EvalResult:
    """Evaluate ``source``; then, if the problem tunes and the source declares knobs, tune;
    in a problem that declares no tuning, tune the constants the candidate's edit changed
    when the run asks for it (:attr:`TrialBudget.changed_trials`, :mod:`._changed`).

    Never raises for a bad candidate: a malformed knob comment leaves the untuned result
    with a ``tuning`` artifact that says how to fix it.
    """
    base = await evaluate(source, None)
    if base.status is not Status.OK:
        return base
    budget = TRIAL_BUDGET.get()
    tuning = problem.tuning
    if tuning is None:
        if budget is None or not budget.changed_trials or budget.parent_source is None:
            return base
        if problem.language != "python":
            return base
        parent = budget.parent_score
        if parent is not None and problem.score(base.objectives) < parent:
            return base  # most children: no need to read what their edits changed
        knobs = changed_constants(budget.parent_source, source)
        tuning = Tuning(trials=budget.changed_trials)
    else:
        try:
            knobs = find_knobs(source)
        except KnobError as exc:
            base.artifacts["tuning"] = f"not tuned: {exc}"
            return base
    if not knobs:
        return base
    parent = budget.parent_score if budget is not None else None
    if tuning.only_improved and parent is not None and problem.score(base.objectives) < parent:
        return base  # trials go to candidates that held their parent's score or beat it
    if tuning.knobs is not None and len(knobs) > tuning.knobs:
        rng = random.Random(hashlib.sha256(source.encode()).digest())
        knobs = sorted(rng.sample(knobs, tuning.knobs), key=lambda k: k.start)
    return await _tune(problem, tuning, source, base, knobs, evaluate)


async def _tune(
    problem: Problem,
    tuning: Tuning,
    source: str,
    base: EvalResult,
    knobs: list[Knob],
    evaluate: Evaluate,
) -> EvalResult:
    import optuna

    metric = tuning.metric or problem.primary.name
    sign = 1.0 if tuning.maximize(problem) else -1.0
    base_value = _value(base, metric)
    if base_value is None:
        base.artifacts["tuning"] = f"not tuned: the untuned result has no metric {metric!r}"
        return base
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    distributions = {k.name: _distribution(optuna, k) for k in knobs}
    defaults = {k.name: k.default for k in knobs}
    seed = int.from_bytes(hashlib.sha256(source.encode()).digest()[:4], "little")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # multivariate TPE is "experimental"
        sampler = optuna.samplers.TPESampler(
            seed=seed,
            multivariate=True,
            n_startup_trials=max(2, tuning.trials // 4),
        )
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.add_trial(
        optuna.trial.create_trial(
            params=defaults, distributions=distributions, value=sign * base_value
        )
    )
    budget = TRIAL_BUDGET.get()
    tried: dict[str, tuple[float, EvalResult]] = {source: (sign * base_value, base)}
    settings: dict[str, dict[str, Any]] = {source: defaults}  # each source's knob values
    used = failed = 0
    for _ in range(tuning.trials):
        # TPE's proposal costs tens of ms with many knobs: off the event loop.
        trial = await asyncio.to_thread(_ask, study, distributions)
        candidate = write_back(source, knobs, trial.params)
        if candidate in tried:  # a setting already scored (ints and choices repeat)
            study.tell(trial, tried[candidate][0])
            continue
        if budget is not None and not budget.take():
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            break
        result = await evaluate(candidate, tuning.stage)
        used += 1
        value = _value(result, metric) if result.status is Status.OK else None
        if value is None:
            failed += 1
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            continue
        tried[candidate] = (sign * value, result)
        settings[candidate] = dict(trial.params)
        study.tell(trial, sign * value)
    best_source = max(tried, key=lambda s: tried[s][0])
    best = tried[best_source][1]
    if best_source != source and tuning.stage is not None:  # trials saw part of the cascade
        if budget is None or budget.take():
            used += 1
            best = await evaluate(best_source, None)
            if best.status is not Status.OK or problem.score(best.objectives) <= problem.score(
                base.objectives
            ):
                best, best_source = base, source
        else:
            best, best_source = base, source
    chosen = settings[best_source]
    tuned = {  # as written into the program (floats to 6 significant digits)
        k.name: ast.literal_eval(literal(k, chosen[k.name])) if k.name in chosen else k.default
        for k in knobs
    }
    return _report(problem, source, base, best, best_source, knobs, tuned, used, failed)


def _report(
    problem: Problem,
    source: str,
    base: EvalResult,
    best: EvalResult,
    best_source: str,
    knobs: list[Knob],
    tuned: dict[str, Any],
    used: int,
    failed: int,
) -> EvalResult:
    primary = problem.primary.name
    untuned_score = base.objectives.get(primary)
    metrics = dict(best.metrics)
    metrics[f"untuned_{primary}"] = untuned_score
    metrics["tuning_trials"] = used
    metrics["knobs"] = tuned
    changed = [
        f"{k.name} {k.default!r} -> {tuned[k.name]!r}" for k in knobs if tuned[k.name] != k.default
    ]
    after = best.objectives.get(primary)
    summary = (
        f"tuned {len(knobs)} knobs with {used} trials ({failed} failed): {primary} "
        f"{_fmt(untuned_score)} -> {_fmt(after)}"
    )
    summary += f"; {', '.join(changed)}" if changed else "; the untuned values stayed best"
    artifacts = {**best.artifacts, "tuning": summary}
    return replace(
        best,
        metrics=metrics,
        artifacts=artifacts,
        evaluations=base.evaluations + used,
        source=best_source if best_source != source else None,
    )


def _ask(study: Any, distributions: dict[str, Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return study.ask(distributions)


def _value(result: EvalResult, metric: str) -> float | None:
    value = result.objectives.get(metric, result.metrics.get(metric))
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


TRUST_REGION = 0.15
"""Trials search within this share of each knob's range around its current value."""


def _distribution(optuna: Any, knob: Knob) -> Any:
    """The search space of one knob: a trust region around its current value.

    Each generation tunes around the values its parent's tuning left, so tuning refines
    (like a local search that learns which directions pay) instead of restarting from random
    points of a many-dimensional box, where a dozen trials find nothing.
    """
    if knob.kind == "categorical":
        return optuna.distributions.CategoricalDistribution(list(knob.choices))
    assert knob.low is not None and knob.high is not None
    if knob.log:
        ratio = (knob.high / knob.low) ** TRUST_REGION
        low, high = max(knob.low, knob.default / ratio), min(knob.high, knob.default * ratio)
    else:
        width = (knob.high - knob.low) * TRUST_REGION
        low, high = max(knob.low, knob.default - width), min(knob.high, knob.default + width)
    if knob.kind == "int":
        low, high = math.floor(low), math.ceil(high)
        if low == high:
            high = low + 1 if low + 1 <= knob.high else high
            low = low - 1 if low == high and low - 1 >= knob.low else low
        return optuna.distributions.IntDistribution(int(low), int(high), log=knob.log)
    return optuna.distributions.FloatDistribution(low, high, log=knob.log)


def _fmt(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, int | float) else str(value)
