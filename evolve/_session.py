"""Start or resume a run: resolve the problem, open the archive, run one controller session."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import signal
from dataclasses import replace
from pathlib import Path

from archive import Archive, RunInfo
from evaluators import Evaluator
from evolve._config import ConfigError, RunConfig
from evolve._controller import Controller, Progress, SessionReport
from islands import Islands, Strategy
from plugins import evaluator_class, problems, selection_strategy
from problems import Problem, load_problem

log = logging.getLogger("evoforge")


def resolve_problem(ref: str) -> Problem:
    """A problem by registered name (``circle_packing``) or by folder / spec-file path."""
    path = Path(ref).expanduser()
    if path.exists():
        return load_problem(path)
    registered = problems()
    if ref in registered:
        return load_problem(registered[ref])
    raise ConfigError(
        f"no problem {ref!r}: not a path and not a registered problem name "
        f"(registered: {', '.join(sorted(registered)) or 'none'})"
    )


def problem_digest(problem: Problem) -> str:
    """SHA-256 of the spec file and the seed: what scores of a run depend on."""
    content = problem.spec_path.read_bytes() + b"\0" + problem.seed_source.encode()
    return hashlib.sha256(content).hexdigest()


def _check_problem_unchanged(archive: Archive, run_id: str, digest: str) -> None:
    """Record (and log) a ``problem_changed`` event when the spec differs from last session's.

    A changed ``evaluate()`` may be a deliberate fix, so this warns rather than refuses: scores
    from before and after may not be comparable, and the event marks where that happened.
    """
    sessions = [e for e in archive.events(run_id) if e.kind in ("run_start", "run_resume")]
    previous = next((e.data.get("problem") for e in reversed(sessions)), None)
    if previous is not None and previous != digest:
        archive.record_event(run_id, "problem_changed", data={"from": previous, "to": digest})
        log.warning(
            "run %s: the problem spec or seed changed since the last session; scores from "
            "before and after may not be comparable (event 'problem_changed' marks the point)",
            run_id,
        )


async def start_run(
    config: RunConfig, db: Path, *, progress: Progress | None = None
) -> tuple[RunInfo, SessionReport]:
    problem = resolve_problem(config.problem)
    parts = _prepare(problem, config)  # before the run exists: a bad setting leaves no trace
    with Archive(db) as archive:
        run = archive.create_run(problem, config=config.to_dict(), seed=config.seed)
        return run, await _session(archive, run, problem, config, parts, "run_start", progress)


async def resume_run(
    run_id: str | None,
    db: Path,
    *,
    budget: int | None = None,
    progress: Progress | None = None,
) -> tuple[RunInfo, SessionReport]:
    """Continue a run from the archive; ``budget`` raises its evaluation budget."""
    with Archive(db) as archive:
        run = archive.run(run_id) if run_id else archive.latest_run()
        if run is None:
            raise ConfigError(f"{db} has no runs to resume; start one with `evoforge run`")
        config = RunConfig.from_dict(run.config, origin=f"run {run.id}")
        if budget is not None:
            config = replace(config, budget=budget)
            archive.update_run(run.id, config=config.to_dict())
        if run.evaluations >= config.budget:
            raise ConfigError(
                f"run {run.id} already spent its budget of {config.budget} "
                "evaluations; pass --budget N with a larger N to continue it"
            )
        if not Path(run.problem_path).exists():
            raise ConfigError(
                f"run {run.id} was started from {run.problem_path}, which no "
                "longer exists; put the problem back there to resume it"
            )
        problem = load_problem(run.problem_path)
        parts = _prepare(problem, config)
        return run, await _session(archive, run, problem, config, parts, "run_resume", progress)


def _prepare(problem: Problem, config: RunConfig) -> tuple[Strategy, type[Evaluator]]:
    """Resolve the selection strategy and the evaluator, and check it can run on this host."""
    strategy = selection_strategy(config.islands.selection)
    cls = evaluator_class(problem.evaluator)
    availability = cls.availability()
    if not availability.available:
        raise ConfigError(f"evaluator {cls.name!r} cannot run here: {availability.reason}")
    return strategy, cls


async def _session(
    archive: Archive,
    run: RunInfo,
    problem: Problem,
    config: RunConfig,
    parts: tuple[Strategy, type[Evaluator]],
    event: str,
    progress: Progress | None,
) -> SessionReport:
    strategy, cls = parts
    digest = problem_digest(problem)
    with archive.transaction():
        if run.status == "running" and event == "run_resume":
            # The previous session never recorded an end: it was killed.
            archive.record_event(run.id, "unclean_stop", data={"previous_status": run.status})
        _check_problem_unchanged(archive, run.id, digest)
        archive.update_run(run.id, status="running", stop_reason=None)
        archive.record_event(
            run.id,
            event,
            data={"budget": config.budget, "evaluations": run.evaluations, "problem": digest},
        )
    islands = Islands(archive, run.id, config.islands, strategy)
    async with cls(problem, workers=config.workers) as evaluator:
        controller = Controller(
            archive, archive.run(run.id), problem, config, evaluator, islands, progress=progress
        )
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(
                signum, controller.request_stop, f"stopped by {signal.Signals(signum).name}"
            )
        try:
            return await controller.run_session()
        except BaseException as exc:
            if not isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError)):
                with archive.transaction():
                    archive.update_run(
                        run.id, status="failed", stop_reason=f"{type(exc).__name__}: {exc}"[:1000]
                    )
                    archive.record_event(run.id, "run_fail", data={"error": str(exc)[:1000]})
            raise
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
