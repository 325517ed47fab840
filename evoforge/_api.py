"""The Python API: run a problem to a budget, resume a run, open an archive.

Everything here is what the ``evoforge`` command does, callable from a script, a notebook, a
thread or a host program: no signal handler is touched (the CLI installs its own), a run
started from a thread or a notebook works, and however a session ends (budget, stop event,
cancellation, an exception) its run row records how.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import os
import threading
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

if TYPE_CHECKING:
    from evoforge.archive import Archive, Program
    from evoforge.evolve import Progress, RunConfig, StopEvent
    from evoforge.problems import Problem


T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True)
class RunResult:
    """How a session of a run ended, and where to find everything else.

    Attributes:
        run_id: the run's id in the archive.
        status: ``finished`` (a budget was reached), ``stopped`` or ``failed``.
        reason: why, in words.
        evaluations: evaluations spent by the run so far (all its sessions).
        best: the best program (by the primary objective), or None if none scored.
        seed: the seed program as stored.
        db: the archive file.
        baselines: reference values the results are reported against
            (``{label: {objective: value}}``), as the last session measured them.
        held_out: the best program's result on the problem's held-out stages at the end of
            the last finished session (``{"program", "status", "metrics", "error"}``), or None.

    Example::

        result = evoforge.run("circle_packing", budget=300)
        if result.best is not None:
            print(result.best.objectives, result.best.source)
        with result.open_archive() as archive:
            print(archive.diff(result.run_id, result.best.id))
    """

    run_id: str
    status: str
    reason: str
    evaluations: int
    best: Program | None
    seed: Program | None
    db: Path
    baselines: dict[str, dict[str, float]]
    held_out: dict[str, Any] | None = None

    def open_archive(self) -> Archive:
        """The archive the run is in (use as a context manager)."""
        return open_archive(self.db)

    @classmethod
    def of(cls, db: Path, run_id: str) -> RunResult:
        """The result of ``run_id`` as the archive at ``db`` records it now."""
        from evoforge.archive import Archive

        with Archive(db) as archive:
            info = archive.run(run_id)
            best_id = info.best_program_id
            return cls(
                run_id=run_id,
                status=info.status,
                reason=info.stop_reason or "",
                evaluations=info.evaluations,
                best=archive.get_program(run_id, best_id) if best_id else None,
                seed=next(archive.programs(run_id), None),
                db=db,
                baselines=archive.baselines(run_id),
                held_out=next((e.data for e in reversed(archive.events(run_id, "held_out"))), None),
            )


async def run_async(
    problem: str | os.PathLike[str] | Problem,
    *,
    budget: int | None = None,
    db: str | os.PathLike[str] | None = None,
    config: RunConfig | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    progress: bool | Progress = False,
    stop: StopEvent | None = None,
    **settings: Any,
) -> RunResult:
    """Run ``problem`` until a budget is reached (or it is stopped); how it ended.

    :func:`run` blocks until then; ``run_async`` is the same, awaitable, for programs that
    already run an event loop. Either works from any thread; :func:`run` also works inside a
    running loop (a notebook cell): the run gets a loop of its own in a worker thread. Signal
    handlers are not touched. Cancelling the run (Ctrl-C in the main thread, or
    ``task.cancel()``) records it as ``stopped``; it can be resumed.

    Example::

        import evoforge

        result = evoforge.run("circle_packing", budget=300, seed=1, db="runs.db")
        print(result.status, result.best.objectives)

        task = asyncio.create_task(evoforge.run_async("circle_packing", budget=300))

    Args:
        problem: a built-in problem name (``circle_packing``), a problem folder or spec file,
            or a :class:`~evoforge.problems.Problem` (e.g. from :func:`define_problem`).
        budget: evaluations to spend, the seed's included (default 200).
        db: the SQLite archive (created if missing); default ``$EVOFORGE_DB``, else
            ``evoforge.db`` in the working directory, as for the CLI.
        config: base settings: a :class:`~evoforge.evolve.RunConfig`, a mapping, or a TOML
            file's path; ``budget`` and ``settings`` override it.
        progress: ``True`` shows the live display on stderr; or an object whose
            ``update(snapshot)`` is called after every candidate.
        stop: an event (``threading.Event``, ``asyncio.Event``); setting it stops the run
            cleanly, as Ctrl-C does for the CLI.
        **settings: any setting of :class:`~evoforge.evolve.RunConfig` (``seed``,
            ``workers``, ``model``, ``islands={"count": 2}``, …).

    Raises:
        ConfigError: a bad or unknown setting (one line naming it), or the problem cannot run
            on this host; nothing is written then.
        ProblemSpecError: the problem spec is malformed.
        SeedError: the seed program failed (the run is stored, ``failed``).
    """
    from evoforge.evolve import start_run

    run_config = _config(problem, config, budget, settings)
    path = _db(db)
    with _display(progress) as display:
        info, _ = await start_run(run_config, path, progress=display, stop=stop)
    return RunResult.of(path, info.id)


async def resume_async(
    run_id: str | None = None,
    *,
    db: str | os.PathLike[str] | None = None,
    budget: int | None = None,
    usd_budget: float | None = None,
    token_budget: int | None = None,
    progress: bool | Progress = False,
    stop: StopEvent | None = None,
) -> RunResult:
    """Continue a run (the archive's latest when ``run_id`` is None) after any stop, a
    ``kill -9`` included; ``budget``, ``usd_budget`` and ``token_budget`` raise its budgets.

    :func:`resume` blocks, ``resume_async`` is awaitable; the other arguments are as for
    :func:`run`.

    Example::

        result = evoforge.resume(result.run_id, db="runs.db", budget=600)

    Raises:
        ArchiveError: there is no archive at ``db``.
        ConfigError: no such run, its budget is already spent (raise it), or its problem
            folder moved.
    """
    from evoforge.evolve import resume_run

    path = _existing(db)
    with _display(progress) as display:
        info, _ = await resume_run(
            run_id,
            path,
            budget=budget,
            usd_budget=usd_budget,
            token_budget=token_budget,
            progress=display,
            stop=stop,
        )
    return RunResult.of(path, info.id)


def _blocking(function: Callable[P, Coroutine[Any, Any, T]], name: str) -> Callable[P, T]:
    """A synchronous twin of an ``async`` API function: same signature and documentation."""

    @functools.wraps(function)
    def blocking(*args: P.args, **kwargs: P.kwargs) -> T:
        return _sync(function(*args, **kwargs))

    blocking.__name__ = blocking.__qualname__ = name
    return blocking


run = _blocking(run_async, "run")
resume = _blocking(resume_async, "resume")


def open_archive(db: str | os.PathLike[str] | None = None, *, read_only: bool = False) -> Archive:
    """The archive at ``db``, to mine: runs, top programs, Pareto fronts, lineages and diffs;
    :mod:`evoforge.evolve.mining` reads it for timelines
    (``mining.timeline(archive, run_id)``), statistics and failure groups.

    Reading while a run writes is safe (SQLite WAL); ``read_only=True`` opens a connection
    that cannot write at all (as ``evoforge ui`` does). Use it as a context manager::

        with evoforge.open_archive("runs.db") as archive:
            run = archive.latest_run()
            best = archive.top(run.id, k=3)
            frame = evoforge.to_frame(best)  # pandas, if installed

    Raises:
        ArchiveError: there is no archive at ``db`` (it is never created by reading).
    """
    from evoforge.archive import Archive

    return Archive(_existing(db), read_only=read_only)


# --- helpers -----------------------------------------------------------------------------------


def _sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to the end from synchronous code, whatever thread this is.

    With no event loop running in this thread, ``asyncio.run``. Inside a running loop (a
    notebook cell, an async host), blocking that loop's thread on another loop is the only
    synchronous answer: the coroutine runs in a worker thread with a loop of its own, and an
    interrupt of the waiting thread (a notebook's stop button) cancels it there, so the run is
    recorded as stopped rather than left running behind the user's back.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    started = threading.Event()
    handle: dict[str, Callable[[], object]] = {}

    async def main() -> T:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None
        handle["cancel"] = lambda: loop.call_soon_threadsafe(task.cancel)
        started.set()
        return await coroutine

    context = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="evoforge") as pool:
        future = pool.submit(context.run, asyncio.run, main())
        try:
            return future.result()
        except KeyboardInterrupt:
            if started.wait(5):
                with contextlib.suppress(RuntimeError):  # its loop already closed: it ended
                    handle["cancel"]()
            with contextlib.suppress(BaseException):
                future.result()  # the session records its stop before this returns
            raise


def _config(
    problem: Any,
    config: Any,
    budget: int | None,
    settings: Mapping[str, Any],
) -> RunConfig:
    from evoforge.evolve import RunConfig, layered, load_config_file, resolve
    from evoforge.problems import Problem

    if isinstance(config, RunConfig):
        data = config.to_dict()
    elif isinstance(config, Mapping):
        data = dict(config)
    elif config is not None:
        data = load_config_file(Path(config))
    else:
        data = {}
    defaults: Mapping[str, Any] = {}
    if isinstance(problem, Problem):
        ref: Any = str(problem.spec_path)
        defaults = problem.run_defaults
    elif isinstance(problem, str | os.PathLike):
        ref = os.fspath(problem)
        resolved = resolve(ref)  # a KernelBench file or an OpenEvolve folder is adapted
        if len(resolved.problems) == 1:
            defaults = resolved.problems[0].run_defaults
            if resolved.adapter:
                ref = str(resolved.problems[0].spec_path.parent)
    else:
        ref = problem  # the schema says what it expects
    data = layered(defaults, data, settings)
    if budget is not None:
        data["budget"] = budget
    data["problem"] = ref
    return RunConfig.load(data, where="evoforge.run()")


def _db(db: str | os.PathLike[str] | None) -> Path:
    from evoforge.archive import default_db

    return Path(db) if db is not None else default_db()


def _existing(db: str | os.PathLike[str] | None) -> Path:
    from evoforge.archive import ArchiveError

    path = _db(db)
    if not path.is_file():
        raise ArchiveError(
            f"no archive at {path}; start a run with evoforge.run(...) or name an existing "
            "archive file"
        )
    return path


class _display:  # noqa: N801 - used as a context manager, like contextlib's
    """The progress receiver: nothing, the CLI's live display, or the caller's object."""

    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.live: Any = None

    def __enter__(self) -> Progress | None:
        if self.progress is True:
            from evoforge.evolve import LiveProgress

            self.live = LiveProgress().__enter__()
            return self.live
        return self.progress or None

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)
