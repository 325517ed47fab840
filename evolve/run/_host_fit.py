"""What of a problem this host can run, and where its evaluations run.

Checked once per session, before a run is created: the evaluator is available here (or on the
Ray cluster), the problem's tools are installed, which objectives can be measured (a GPU
kernel on a host without the GPU is checked, not timed), whether knob tuning is on, the
baselines. Evaluator tests use :func:`measurable_problem` to score a problem the way a run on
their host would.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from evoforge.evaluators import Evaluator, evaluator_class
from evoforge.evaluators.tuning import tuning_unavailable
from evoforge.evolve.config import ConfigError, RunConfig
from evoforge.evolve.prompts import PromptTemplateError, load_templates
from evoforge.islands import Strategy, per_instance
from evoforge.plugins import selection_strategy
from evoforge.problems import (
    PASSED,
    Direction,
    Objective,
    Problem,
    measure_baselines,
    problem_unready,
)

log = logging.getLogger("evoforge")


@dataclass(frozen=True)
class SessionParts:
    """What a session needs besides the archive: resolved once, before a run is created."""

    strategy: Strategy
    evaluator: type[Evaluator]
    problem: Problem  # the problem as this host can score it (see measurable_problem)
    unmeasurable: dict[str, str]
    baselines: dict[str, dict[str, float]]  # stored with the session's start event
    tuning: str  # "on (N trials)", "off: why", or "" when the problem does not tune


def prepare_session(problem: Problem, config: RunConfig) -> SessionParts:
    """Resolve the selection strategy and the evaluator, and check it can run on this host."""
    strategy = selection_strategy(config.islands.selection)
    if per_instance(strategy) and problem.instances is None:
        raise ConfigError(
            f"selection {config.islands.selection!r} chooses parents by per-instance scores, "
            f"and {problem.name} declares none; declare where evaluate() returns them "
            '(instances = {"metric": "...", "direction": "..."}) or choose another selection'
        )
    cls = evaluator_class(problem.evaluator)
    if config.executor == "ray":  # ask a node of the cluster, not this host
        from evoforge.evaluators.executors import probe

        availability, unmeasurable = probe(cls, problem, config.ray_address)
        where = "on the Ray cluster"
    else:
        availability, unmeasurable, where = cls.availability(), None, "here"
    if not availability.available:
        raise ConfigError(f"evaluator {cls.name!r} cannot run {where}: {availability.reason}")
    if missing_tools := problem_unready(problem):
        raise ConfigError(f"problem {problem.name!r} cannot run here: {missing_tools}")
    measured, missing = measurable_problem(problem, cls, unmeasurable)
    measured, tuning = tuning_problem(measured, config)
    try:
        load_templates(problem, config.prompts)  # a broken prompt file fails now, not per call
    except PromptTemplateError as exc:
        raise ConfigError(str(exc)) from None
    return SessionParts(strategy, cls, measured, missing, measure_baselines(problem), tuning)


def tuning_problem(problem: Problem, config: RunConfig) -> tuple[Problem, str]:
    """``problem`` without knob tuning when the run turns it off or optuna is missing, and a
    note for the session's start event (and stderr) saying which (for a problem that
    declares no tuning: whether the constants edits change are tuned)."""
    if problem.tuning is None:
        return problem, changed_constant_trials(config, problem)[1]
    if not config.tune:
        return replace(problem, tuning=None), "off (--no-tune)"
    if why := tuning_unavailable():
        log.warning("run of %s: knob tuning is off: %s", problem.name, why)
        return replace(problem, tuning=None), f"off: {why}"
    return problem, f"on ({problem.tuning.trials} trials per candidate)"


def changed_constant_trials(config: RunConfig, problem: Problem) -> tuple[int, str]:
    """Trials for the constants a child's edit changed (``[search] tune_changed``) in this
    session of ``problem``, and the note that says so: none when the problem tunes declared
    knobs instead, is not Python, the run says ``--no-tune``, or optuna is missing."""
    trials = config.search.tune_changed
    if not trials or problem.tuning is not None or problem.language != "python":
        return 0, ""
    if not config.tune:
        return 0, "changed constants: off (--no-tune)"
    if why := tuning_unavailable():
        log.warning("run of %s: tuning the constants edits change is off: %s", problem.name, why)
        return 0, f"changed constants: off: {why}"
    return trials, f"changed constants: {trials} trials per child that holds its parent's score"


def measurable_problem(
    problem: Problem, cls: type[Evaluator], unmeasurable: dict[str, str] | None = None
) -> tuple[Problem, dict[str, str]]:
    """``problem`` without the objectives ``cls`` cannot measure on this host (or, given
    ``unmeasurable``, where it evaluates), and why not.

    A Triton kernel on a machine without a GPU can be checked for correctness but not timed:
    rather than rank by a made-up speedup, the run ranks by the first objective that is
    measured (the objectives keep their declared order). When none is, and the evaluator can
    still check correctness (:meth:`~evoforge.evaluators.Evaluator.correctness_only`), the run
    is correctness-only: one objective, ``passed``, 1 for every correct program.

    Raises:
        ConfigError: no objective of the problem can be measured here.
    """
    if unmeasurable is None:
        unmeasurable = cls.unmeasurable(problem)
    missing = {
        name: why
        for name, why in unmeasurable.items()
        if name in {o.name for o in problem.objectives}
    }
    if not missing:
        return problem, {}
    kept = tuple(o for o in problem.objectives if o.name not in missing)
    if not kept and cls.correctness_only(problem):
        # Checked but not timed: every correct program passes; no error size is optimised.
        kept = (Objective(PASSED, Direction.MAXIMIZE),)
    if not kept:
        reasons = "; ".join(f"{name}: {why}" for name, why in missing.items())
        raise ConfigError(
            f"evaluator {cls.name!r} can measure none of {problem.name}'s objectives on this "
            f"host ({reasons}); run it on a host that has the device"
        )
    return replace(problem, objectives=kept), missing


def correctness_only(problem: Problem, measured: Problem) -> bool:
    """Whether ``measured`` (from :func:`measurable_problem`) is a correctness-only run."""
    declared = {o.name for o in problem.objectives}
    return measured.primary.name == PASSED and PASSED not in declared


def isolation_of(evaluator: Evaluator) -> dict[str, str]:
    """What isolation the evaluator's candidates get: what its sandbox processes reported
    (``sandbox_info``: user, namespaces, memory accounting, ...), else what this host allows."""
    info = getattr(evaluator, "sandbox_info", None)
    if isinstance(info, dict) and info:
        return {str(k): str(v) for k, v in info.items() if k != "workdir_root"}
    from evoforge.evaluators.sandbox import host_isolation

    return dict(host_isolation())


def make_executor(cls: type[Evaluator], problem: Problem, config: RunConfig) -> Evaluator:
    """Where evaluations run: ``cls``'s own sandboxes on this host (``executor = "local"``),
    or Ray actors across a cluster (``"ray"``), ``config.workers`` at a time."""
    if config.executor == "ray":
        from evoforge.evaluators.executors import RayExecutor

        # It has an Evaluator's interface (start, evaluate, close, async with) without
        # subclassing it: the class it runs remotely is the Evaluator.
        ray = RayExecutor(cls, problem, workers=config.workers, address=config.ray_address)
        return ray  # type: ignore[return-value]
    return cls(problem, workers=config.workers)
