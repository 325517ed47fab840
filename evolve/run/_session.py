"""Start or resume a run: resolve the problem, open the archive, run one controller session."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import signal
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from evoforge.archive import Archive, ArchiveWriteError, RunInfo, RunLock
from evoforge.evaluators import Evaluator
from evoforge.evolve.config import ConfigError, RunConfig
from evoforge.evolve.run._controller import Controller
from evoforge.evolve.run._endings import Allowance
from evoforge.evolve.run._host_fit import (
    SessionParts,
    correctness_only,
    isolation_of,
    make_executor,
    prepare_session,
)
from evoforge.evolve.run._lessons import restore_lessons
from evoforge.evolve.run._proposer import make_proposer
from evoforge.evolve.run._resolve import resolve_problem
from evoforge.evolve.run._snapshot import Progress, SessionReport
from evoforge.evolve.search import TransferSource
from evoforge.islands import Islands
from evoforge.problems import (
    PASSED,
    Problem,
    load_problem,
)

log = logging.getLogger("evoforge")
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_STOP_POLL_S = 0.1


def problem_digest(problem: Problem) -> str:
    """SHA-256 of the spec file and the seed: what scores of a run depend on."""
    content = problem.spec_path.read_bytes() + b"\0" + problem.seed_source.encode()
    return hashlib.sha256(content).hexdigest()


def _check_problem_unchanged(
    archive: Archive, run_id: str, digest: str, ranked_by: list[str]
) -> None:
    """Record (and log) an event when the spec, or what this host can measure, differs from
    the last session's.

    A changed ``evaluate()`` may be a deliberate fix, and a run may move to a host with a GPU,
    so this warns rather than refuses: scores from before and after may not be comparable, and
    the event (``problem_changed`` / ``objectives_changed``) marks where that happened.
    """
    sessions = [e for e in archive.events(run_id) if e.kind in ("run_start", "run_resume")]
    if not sessions:
        return
    last = sessions[-1].data
    if last.get("problem") not in (None, digest):
        archive.record_event(
            run_id, "problem_changed", data={"from": last["problem"], "to": digest}
        )
        log.warning(
            "run %s: the problem spec or seed changed since the last session; scores from "
            "before and after may not be comparable (event 'problem_changed' marks the point)",
            run_id,
        )
    if last.get("objectives") not in (None, ranked_by):
        archive.record_event(
            run_id, "objectives_changed", data={"from": last["objectives"], "to": ranked_by}
        )
        log.warning(
            "run %s: the last session ranked by %s, this host ranks by %s; scores from before "
            "and after are not comparable (event 'objectives_changed' marks the point)",
            run_id,
            last["objectives"][0],
            ranked_by[0],
        )


async def start_run(
    config: RunConfig,
    db: Path,
    *,
    progress: Progress | None = None,
    handle_signals: bool = False,
    stop: StopEvent | None = None,
    run_id: str | None = None,
    suite: SuiteShare | None = None,
) -> tuple[RunInfo, SessionReport]:
    """Create a run of ``config.problem`` in the archive at ``db`` and run one session.

    Args:
        config: the run's settings.
        db: the SQLite archive (created if missing).
        progress: receives a snapshot after every candidate (the CLI's live display).
        handle_signals: SIGINT/SIGTERM stop the session cleanly; the previous handlers are
            restored afterwards. Main thread only (elsewhere it does nothing).
        stop: an event (``threading.Event`` or ``asyncio.Event``) that stops the session
            cleanly once set.
        run_id: the new run's id (default: a readable unique one).
        suite: the run is a suite's task: its budget grows as the suite grants it, and its
            evaluations share the suite's slots.

    Raises:
        ConfigError: a setting or the problem cannot run here (nothing is written then).
        SeedError: the seed program failed (the run is stored, ``failed``).
        ArchiveWriteError: the archive could not be written (disk full, I/O error); what was
            committed is kept, and the run can be resumed.
    """
    problem = resolve_problem(config.problem)
    parts = prepare_session(problem, config)  # before the run exists: a bad setting leaves no trace
    options = SessionOptions(progress, handle_signals, stop, suite)
    with Archive(db) as archive:
        run = archive.create_run(problem, config=config.to_dict(), seed=config.seed, run_id=run_id)
        with _writer_lock(archive, run.id):
            return run, await _session(archive, run, problem, config, parts, "run_start", options)


async def resume_run(
    run_id: str | None,
    db: Path,
    *,
    budget: int | None = None,
    usd_budget: float | None = None,
    token_budget: int | None = None,
    progress: Progress | None = None,
    handle_signals: bool = False,
    stop: StopEvent | None = None,
    suite: SuiteShare | None = None,
) -> tuple[RunInfo, SessionReport]:
    """Continue a run from the archive (the latest when ``run_id`` is None) after any stop,
    ``kill -9`` included; ``budget``, ``usd_budget`` and ``token_budget`` raise its budgets.
    The other arguments are as for :func:`start_run`.

    Raises:
        ConfigError: no such run, its budget is spent, or its problem folder moved.
        RunLockedError: another controller is running this run right now (nothing is
            written then).
    """
    with Archive(db) as archive:
        run = archive.find_run(run_id) if run_id else archive.latest_run()
        if run is None:
            raise ConfigError(f"{db} has no runs to resume; start one with `evoforge run`")
        _check_seeded(archive, run)
        with _writer_lock(archive, run.id):
            run = archive.run(run.id)  # as the last writer left it
            return await _resume_locked(
                archive,
                run,
                {"budget": budget, "usd_budget": usd_budget, "token_budget": token_budget},
                SessionOptions(progress, handle_signals, stop, suite),
            )


def _writer_lock(archive: Archive, run_id: str) -> RunLock:
    """The run's one-writer lock (taken before anything of the run is written)."""
    path = archive.path if str(archive.path) == ":memory:" else archive.path.resolve()
    return RunLock(path, run_id)


async def _resume_locked(
    archive: Archive, run: RunInfo, raises: dict[str, float | None], options: SessionOptions
) -> tuple[RunInfo, SessionReport]:
    """:func:`resume_run` once the run's lock is held: raise budgets, check, run a session."""
    stored = dict(run.config)
    if "search" not in stored:
        # A run started before [search] existed keeps its grid: built-in descriptors would
        # put its new programs in other cells than its old ones.
        stored["search"] = {"descriptors": "none"}
    if "exploitation" not in (stored.get("islands") or {}):
        # ... and its parent selection: the strategy alone, as when it started.
        stored["islands"] = {**(stored.get("islands") or {}), "exploitation": 0.0}
    config = RunConfig.from_dict(stored, origin=f"run {run.id}")
    raised = {name: value for name, value in raises.items() if value is not None}
    if raised:
        config = config.replace(**raised)
        archive.update_run(run.id, config=config.to_dict())
    if run.evaluations >= config.budget and options.suite is None:  # a suite grants more
        raise ConfigError(
            f"run {run.id} already spent its budget of {config.budget} "
            "evaluations; pass --budget N with a larger N to continue it"
        )
    if config.usd_budget is not None and (run.cost_usd or 0.0) >= config.usd_budget:
        raise ConfigError(
            f"run {run.id} already spent its USD budget of ${config.usd_budget:g}; pass "
            "--usd-budget X with a larger X to continue it"
        )
    tokens = (run.tokens_in or 0) + (run.tokens_out or 0)
    if config.token_budget is not None and tokens >= config.token_budget:
        raise ConfigError(
            f"run {run.id} already used its token budget of {config.token_budget}; pass "
            "--token-budget N with a larger N to continue it"
        )
    if not Path(run.problem_path).exists():
        raise ConfigError(
            f"run {run.id} was started from {run.problem_path}, which no "
            "longer exists; put the problem back there to resume it"
        )
    problem = load_problem(run.problem_path)
    parts = prepare_session(problem, config)
    return run, await _session(archive, run, problem, config, parts, "run_resume", options)


def _check_seeded(archive: Archive, run: RunInfo) -> None:
    """Refuse to resume a run whose seed failed: nothing is there to select parents from.

    Raised before anything is written, so the run keeps the stop reason its seed failure
    recorded.
    """
    seed = next(archive.programs(run.id), None)
    if seed is None or seed.status == "ok" or archive.count_programs(run.id, "ok"):
        return
    from evoforge.evolve.mining import failure_message
    from evoforge.evolve.run._controller import shorten

    raise ConfigError(
        f"run {run.id} cannot be resumed: its seed program evaluated to '{seed.status}' "
        f"({shorten(failure_message(seed.artifacts), 300)}), so it has no program to evolve "
        f"from. Fix the seed or evaluate() in {run.problem_path}, then start a new run: "
        f"evoforge run {run.problem_path}"
    )


class StopEvent(Protocol):
    """Anything with ``is_set()``: ``threading.Event``, ``asyncio.Event``."""

    def is_set(self) -> bool: ...


@dataclass(frozen=True)
class SuiteShare:
    """What a suite's task session shares with the suite: its budget comes in grants
    (``allowance``), its evaluations take the suite's slots (``eval_slots``), and its prompts
    may offer other tasks' elites (``transfer``, None when transfer is off)."""

    allowance: Allowance
    eval_slots: asyncio.Semaphore
    transfer: TransferSource | None = None


@dataclass(frozen=True)
class SessionOptions:
    """How a session reports and stops (see :func:`start_run`)."""

    progress: Progress | None = None
    handle_signals: bool = False
    stop: StopEvent | None = None
    suite: SuiteShare | None = None


async def _session(
    archive: Archive,
    run: RunInfo,
    problem: Problem,
    config: RunConfig,
    parts: SessionParts,
    event: str,
    options: SessionOptions,
) -> SessionReport:
    digest = problem_digest(problem)
    ranked_by = [o.name for o in parts.problem.objectives]
    checks_only = correctness_only(problem, parts.problem)
    if parts.unmeasurable:
        log.warning(
            "run %s: %s cannot be measured on this host (%s); %s",
            run.id,
            ", ".join(parts.unmeasurable),
            "; ".join(sorted(set(parts.unmeasurable.values()))),
            "this session is correctness-only: every program gets a verdict, and every "
            f"correct one scores {PASSED}=1 (an error within tolerance is a pass, not a score)"
            if checks_only
            else f"this session ranks programs by {ranked_by[0]}",
        )
    with archive.transaction():
        if run.status == "running" and event == "run_resume":
            # The previous session never recorded an end: it was killed.
            archive.record_event(run.id, "unclean_stop", data={"previous_status": run.status})
        _check_problem_unchanged(archive, run.id, digest, ranked_by)
        archive.update_run(run.id, status="running", stop_reason=None)
    # From here the row says "running": every way out below records how the session ended.
    try:
        islands = Islands(archive, run.id, config.islands, parts.strategy, parts.problem.instances)
        restore_lessons(archive, run.id)  # what the servers taught: workers start from it
        proposer = make_proposer(parts.problem, config)
        await proposer.start()  # the workers import litellm while the evaluators start
        try:
            async with make_executor(parts.evaluator, parts.problem, config) as evaluator:
                # Recorded once the evaluator runs: it says what isolation candidates got.
                archive.record_event(
                    run.id,
                    event,
                    data={
                        "budget": config.budget,
                        "evaluations": run.evaluations,
                        "problem": digest,
                        "objectives": ranked_by,
                        "unmeasurable": parts.unmeasurable,
                        "correctness_only": checks_only,
                        "baselines": parts.baselines,
                        "tuning": parts.tuning,
                        "isolation": isolation_of(evaluator),
                        # How to show the run's scores and grid without its spec (mining)
                        "directions": {o.name: str(o.direction) for o in problem.objectives},
                        "descriptors": [
                            [d.name, d.low, d.high, d.bins] for d in problem.descriptors
                        ],
                    },
                )
                controller = Controller(
                    archive,
                    archive.run(run.id),
                    parts.problem,
                    config,
                    evaluator,
                    islands,
                    progress=options.progress,
                    proposer=proposer,
                    allowance=options.suite.allowance if options.suite else None,
                    eval_slots=options.suite.eval_slots if options.suite else None,
                    transfer=options.suite.transfer if options.suite else None,
                )
                with _stop_on_signals(controller, options.handle_signals):
                    async with _stop_on_event(controller, options.stop):
                        report = await controller.run_session()
                if report.status == "finished":
                    await _held_out(archive, run.id, evaluator, report)
                return report
        finally:
            await proposer.close()
    except (KeyboardInterrupt, asyncio.CancelledError) as exc:
        _record_end(archive, run.id, "stopped", f"cancelled ({type(exc).__name__})")
        raise
    except ArchiveWriteError as exc:
        _record_end(archive, run.id, "failed", str(exc))
        raise ArchiveWriteError(
            f"run {run.id} stopped: {exc} (`evoforge resume {run.id}`)"
        ) from None
    except BaseException as exc:
        _record_end(archive, run.id, "failed", f"{type(exc).__name__}: {exc}")
        raise


async def _held_out(
    archive: Archive, run_id: str, evaluator: Evaluator, report: SessionReport
) -> None:
    """Score the session's best program on the problem's held-out stages; record the result
    in a ``held_out`` event (never with the program: held-out data stays out of prompts)."""
    if not evaluator.problem.held_out or report.best_program_id is None:
        return
    best = archive.get_program(run_id, report.best_program_id)
    result = await evaluator.evaluate_held_out(best.source or "")
    if result is None:
        return
    numbers = {
        k: v
        for k, v in result.metrics.items()
        if isinstance(v, int | float | str | bool) and k not in ("stage_reached",)
    }
    with archive.transaction():
        archive.record_event(
            run_id,
            "held_out",
            data={
                "program": best.id,
                "stages": [stage.name for stage in evaluator.problem.held_out],
                "status": str(result.status),
                "metrics": numbers,
                "error": result.artifacts.get("error", ""),
            },
        )


def _record_end(archive: Archive, run_id: str, status: str, reason: str) -> None:
    """Record an end the controller could not record itself (it never started, or was cut).

    Best effort when the archive cannot be written (a full disk): the row then still says
    ``running``, and the next resume records the session as an unclean stop.
    """
    try:
        if archive.run(run_id).status != "running":
            return  # the controller already recorded how it ended
        with archive.transaction():
            archive.update_run(run_id, status=status, stop_reason=reason[:1000])
            kind = "run_stop" if status == "stopped" else "run_fail"
            archive.record_event(run_id, kind, data={"reason": reason[:1000]})
    except ArchiveWriteError as exc:
        log.warning("run %s: could not record how the session ended (%s)", run_id, exc)


@contextlib.contextmanager
def _stop_on_signals(controller: Controller, enabled: bool) -> Iterator[None]:
    """SIGINT and SIGTERM stop the session cleanly (the CLI's behaviour).

    Only in the main thread (signals are delivered there); the handlers that were installed
    before are restored exactly afterwards, so a host program keeps its own.
    """
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    previous = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS}
    for signum in _STOP_SIGNALS:
        loop.add_signal_handler(
            signum, controller.request_stop, f"stopped by {signal.Signals(signum).name}"
        )
    try:
        yield
    finally:
        for signum, handler in previous.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, handler)


@contextlib.asynccontextmanager
async def _stop_on_event(controller: Controller, stop: StopEvent | None) -> AsyncIterator[None]:
    """``stop.set()`` (from any thread) ends the session cleanly, as a signal does."""
    if stop is None:
        yield
        return

    async def watch() -> None:
        while not stop.is_set():
            await asyncio.sleep(_STOP_POLL_S)
        controller.request_stop("stopped: the stop event was set")

    watcher = asyncio.create_task(watch())
    try:
        yield
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
