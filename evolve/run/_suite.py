"""A suite as one run with one budget: its tasks' sessions run side by side, and a scheduler
grants each task evaluations as the allocation policy decides (:mod:`._allocation`).

Each task is an ordinary run of the archive (created on its first grant). Its session runs
with an :class:`~evoforge.evolve.run._endings.Allowance`: when it has spent what it was
granted it asks the scheduler for more and waits; the scheduler records each decision
(:meth:`~evoforge.archive.Archive.record_grant`, which also stores the task's new cap as its
run's budget) and answers with the new cap, or ends the session when the suite's budget is
spent. ``concurrency`` tasks hold a grant at once, and every task's evaluations take the same
``workers`` evaluation slots, so the suite keeps the workers busy whichever tasks run.

Resumable after any stop, ``kill -9`` included: the suite's budget, its tasks and every grant
are in the archive, so :func:`resume_suite` rebuilds the allocation's state (caps, spent, the
bandit's history) and reopens first the tasks that held an unfinished grant.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from evoforge.archive import Archive, RunLock, SuiteInfo, SuiteTask
from evoforge.evolve.config import ConfigError, RunConfig, SuiteConfig
from evoforge.evolve.mining import ENDED, gain_of
from evoforge.evolve.run._allocation import Arm, Policy, make_policy
from evoforge.evolve.run._batch import TaskResult, task_result
from evoforge.evolve.run._controller import SeedError
from evoforge.evolve.run._endings import Ending
from evoforge.evolve.run._resolve import resolve_problem
from evoforge.evolve.run._session import SuiteShare, resume_run, start_run
from evoforge.evolve.run._snapshot import Snapshot
from evoforge.evolve.run._transfer import related_tasks, transfer_source
from evoforge.problems import Problem

log = logging.getLogger("evoforge")
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class SuiteProgress(Protocol):
    """What a live display of a suite is told."""

    def task(self, arm: Arm, snapshot: Snapshot) -> None:
        """A task's session has a new snapshot."""

    def allocation(self, suite: SuiteInfo, arms: Sequence[Arm], note: str) -> None:
        """The allocation changed (a grant, a task ended); ``note`` says how."""


@dataclass(frozen=True)
class SuiteReport:
    """How a suite run went: its status and why, and each task's result (in order)."""

    suite_id: str
    status: str
    reason: str
    results: list[TaskResult] = field(default_factory=list)
    arms: list[Arm] = field(default_factory=list)


async def start_suite(
    name: str,
    problems: Sequence[Problem],
    settings: Callable[[Problem], Mapping[str, Any]],
    db: Path,
    *,
    budget: int,
    config: SuiteConfig,
    progress: SuiteProgress | None = None,
    handle_signals: bool = False,
    stop: asyncio.Event | None = None,
) -> SuiteReport:
    """Run ``problems`` as one suite run that spends ``budget`` evaluations in total.

    Args:
        name: the suite's name (``pie_suite``, a folder).
        problems: its tasks.
        settings: the run settings of a task (``problem`` included), validated per task.
        db: the archive.
        budget: evaluations in total, across the tasks (each task's seed included).
        config: how the budget is allocated (``[suite]``).
        progress: the live display.
        handle_signals: SIGINT/SIGTERM stop every task cleanly (resumable).
        stop: an event that stops the suite cleanly once set.

    Raises:
        ConfigError: a task's settings are invalid, the budget is below the tasks' floors,
            or a task cannot run on this host (the suite stops).
    """
    configs = [RunConfig.from_dict(settings(p), origin=f"suite task {p.name}") for p in problems]
    if config.allocation == "bandit":
        floor, each = config.floor, f"a floor of {config.floor} evaluations each"
        fix = "raise --budget or lower [suite] floor" if floor > 1 else "raise --budget"
    else:
        floor, each, fix = 1, "one evaluation each (its seed)", "raise --budget"
    if budget < floor * len(problems):
        raise ConfigError(
            f"a suite of {len(problems)} tasks with {each} needs a budget of at least "
            f"{floor * len(problems)}, not {budget}; {fix}"
        )
    with Archive(db) as archive:
        suite = archive.create_suite(
            name,
            budget=budget,
            allocation=config.allocation,
            config={**config.model_dump(mode="json"), "workers": configs[0].workers},
            tasks=[(p.name, c.to_dict()) for p, c in zip(problems, configs, strict=True)],
        )
    return await _run(db, suite.id, progress, handle_signals, stop)


async def resume_suite(
    suite_id: str,
    db: Path,
    *,
    budget: int | None = None,
    progress: SuiteProgress | None = None,
    handle_signals: bool = False,
    stop: asyncio.Event | None = None,
) -> SuiteReport:
    """Continue a suite after any stop, ``kill -9`` included; ``budget`` raises its total.

    Raises:
        ConfigError: its budget is spent (pass a larger ``budget``), or a task cannot run.
        RunLockedError: another process is running this suite.
    """
    with Archive(db) as archive:
        suite = archive.suite(suite_id)
        if budget is not None and budget != suite.budget:
            if budget < suite.budget:
                raise ConfigError(
                    f"suite {suite_id} has a budget of {suite.budget}; --budget can raise it, "
                    f"not lower it to {budget}"
                )
            archive.update_suite(suite_id, budget=budget)
    return await _run(db, suite_id, progress, handle_signals, stop)


async def _run(
    db: Path,
    suite_id: str,
    progress: SuiteProgress | None,
    handle_signals: bool,
    stop: asyncio.Event | None,
) -> SuiteReport:
    stop = stop or asyncio.Event()
    path = db if str(db) == ":memory:" else db.resolve()
    with Archive(db) as archive, RunLock(path, suite_id):
        scheduler = Scheduler(archive, db, suite_id, progress, stop)
        with _stop_on_signals(stop, handle_signals):
            return await scheduler.run()


class _TaskAllowance:
    """A task's :class:`~evoforge.evolve.run._endings.Allowance`: the scheduler's answer."""

    def __init__(self, scheduler: Scheduler, ord: int) -> None:
        self.scheduler, self.ord = scheduler, ord

    async def extend(self, evaluations: int) -> int | Ending:
        return await self.scheduler.renew(self.ord, evaluations)


class Scheduler:
    """Grants a suite's evaluations to its tasks and runs their sessions (module docstring)."""

    def __init__(
        self,
        archive: Archive,
        db: Path,
        suite_id: str,
        progress: SuiteProgress | None,
        stop: asyncio.Event,
    ) -> None:
        self.archive, self.db, self.progress, self.stop = archive, db, progress, stop
        self.suite = archive.suite(suite_id)
        self.config = SuiteConfig(
            **{k: v for k, v in self.suite.config.items() if k in SuiteConfig.model_fields}
        )
        self.tasks: list[SuiteTask] = archive.suite_tasks(suite_id)
        workers = int(self.suite.config.get("workers") or 1)
        self.slots = asyncio.Semaphore(workers)
        self.concurrency = min(self.config.concurrency or workers, len(self.tasks))
        self.open_limit = max(self.config.open_tasks, self.concurrency)
        self.policy: Policy = make_policy(self.config, self.suite.budget, len(self.tasks))
        self.arms = [Arm(t.ord, t.problem) for t in self.tasks]
        self.related = self._related() if self.config.transfer else None
        self.sessions: dict[int, asyncio.Task[Any]] = {}
        self.waiting: dict[int, asyncio.Future[int | Ending]] = {}
        self.ended_by_suite: set[int] = set()  # sessions the scheduler itself ended
        self.last_grant: dict[int, int] = {}  # ord -> seq of its last grant (pausing: LRU)
        self.error: BaseException | None = None
        self.failures: list[str] = []  # why tasks that ended by themselves failed
        self.opened = asyncio.Event()  # a session was opened (wakes the loop in run())
        self._replay()

    # --- state from the archive ---------------------------------------------------------------

    def _replay(self) -> None:
        """Caps, spent and the bandit's history from the archive; retire what ended."""
        for grant in self.archive.grants(self.suite.id):
            arm = self.arms[grant.ord]
            arm.cap = grant.cap
            if grant.why.startswith(ENDED):
                arm.live = False
            elif grant.evaluations > 0:
                arm.points.append((grant.spent, grant.gain))
                self.last_grant[grant.ord] = grant.seq
        for arm in self.arms:
            self._refresh(arm)
            if not arm.live and self._revivable(arm):
                arm.live = True  # it failed (a model outage, a failure streak): try it again

    def _revivable(self, arm: Arm) -> bool:
        """Whether a task retired by a failure may run again now (a resume): its run failed
        after its seed evaluated ok, unlike a task whose seed failed (that stays retired)."""
        run_id = self.tasks[arm.ord].run_id
        if run_id is None or not self._run_exists(run_id):
            return False
        run = self.archive.run(run_id)
        return run.status == "failed" and self.archive.count_programs(run_id, "ok") > 0

    def _refresh(self, arm: Arm) -> None:
        """Read a task's spent evaluations and gain from its run."""
        run_id = self.tasks[arm.ord].run_id
        if run_id is None or not self._run_exists(run_id):
            return
        run = self.archive.run(run_id)
        arm.spent = run.evaluations
        if arm.seed_score is None:
            seed = next(self.archive.programs(run_id), None)
            arm.seed_score = seed.score if seed is not None else None
        arm.gain = gain_of(arm.seed_score, run.best_score)

    def _run_exists(self, run_id: str) -> bool:
        query = "SELECT 1 FROM runs WHERE id = ?"
        return self.archive.conn.execute(query, (run_id,)).fetchone() is not None

    def _related(self) -> list[list[int]]:
        """Each task's related tasks (cross-task transfer), from their problems."""
        problems = [resolve_problem(str(t.config["problem"])) for t in self.tasks]
        return related_tasks(problems, self.config.transfer_similarity)

    def _task_run(self, ord: int) -> tuple[str, str | None]:
        task = self.tasks[ord]
        run_id = task.run_id if task.run_id and self._run_exists(task.run_id) else None
        return task.problem, run_id

    def _killed(self, arm: Arm) -> bool:
        """Whether the task's run still says ``running`` (its session was killed)."""
        run_id = self.tasks[arm.ord].run_id
        if run_id is None or not self._run_exists(run_id):
            return False
        return self.archive.run(run_id).status == "running"

    @property
    def remaining(self) -> int:
        return self.suite.budget - sum(a.cap for a in self.arms)

    # --- the loop -----------------------------------------------------------------------------

    async def run(self) -> SuiteReport:
        with self.archive.transaction():
            self.archive.update_suite(self.suite.id, status="running", stop_reason=None)
        # Tasks that held a grant when the suite last stopped go on with it first; tasks
        # whose session was killed reopen too, to wait for grants and end as sessions do.
        for arm in self.arms:
            if arm.live and (arm.cap > arm.spent or self._killed(arm)):
                arm.busy = arm.cap > arm.spent
                self._open(arm)
        self._dispatch()
        try:
            while self.sessions:
                # Sessions open while this waits (a grant from inside another task's
                # session): their opening wakes it, so their ends are seen too.
                self.opened.clear()
                opened = asyncio.ensure_future(self.opened.wait())
                try:
                    await asyncio.wait(
                        {*self.sessions.values(), opened}, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    opened.cancel()
                for ord in [o for o, t in self.sessions.items() if t.done()]:
                    self._ended(ord, self.sessions.pop(ord))
                self._dispatch()
        except BaseException:
            self.stop.set()
            await asyncio.gather(*self.sessions.values(), return_exceptions=True)
            self._finish("stopped", "cancelled")
            raise
        return self._report()

    def _dispatch(self) -> None:
        """Grant while fewer than ``concurrency`` tasks hold a grant and budget remains; once
        nothing is held and nothing more can be granted, end the waiting sessions."""
        if self.stop.is_set() or self.error is not None:
            return
        while sum(a.busy for a in self.arms) < self.concurrency and self.remaining > 0:
            decision = self.policy.decide(self.arms, self.remaining)
            if decision is None:
                break
            self._grant(self.arms[decision.ord], decision.evaluations, decision.why)
        if not any(a.busy for a in self.arms):
            reason = (
                f"suite: its budget of {self.suite.budget} evaluations is spent"
                if self.remaining <= 0
                else "suite: no task can use the rest of its budget"
            )
            for ord in list(self.waiting):
                self._end_session(ord, Ending("finished", reason))

    def _grant(self, arm: Arm, evaluations: int, why: str) -> None:
        grant = self.archive.record_grant(
            self.suite.id, arm.ord, evaluations, spent=arm.spent, gain=arm.gain, why=why
        )
        arm.cap, arm.busy = grant.cap, True
        arm.points.append((arm.spent, arm.gain))
        self.last_grant[arm.ord] = grant.seq
        self._tell(f"{arm.name}: +{evaluations} ({why})")
        if arm.ord in self.waiting:
            self.waiting.pop(arm.ord).set_result(arm.cap)
        elif arm.ord not in self.sessions:
            self._open(arm)

    async def renew(self, ord: int, spent: int) -> int | Ending:
        """A task spent its grant (``spent`` evaluations in all): wait for the next one."""
        arm = self.arms[ord]
        arm.busy = False
        self._refresh(arm)
        arm.spent = max(arm.spent, spent)
        future: asyncio.Future[int | Ending] = asyncio.get_running_loop().create_future()
        self.waiting[ord] = future
        self._dispatch()
        try:
            return await future
        finally:
            self.waiting.pop(ord, None)

    def _end_session(self, ord: int, ending: Ending) -> None:
        future = self.waiting.pop(ord, None)
        if future is not None and not future.done():
            self.ended_by_suite.add(ord)
            future.set_result(ending)

    # --- sessions -----------------------------------------------------------------------------

    def _open(self, arm: Arm) -> None:
        """Start (or resume) the session of ``arm``'s task, pausing the task granted least
        recently when ``open_tasks`` sessions are open already."""
        if len(self.sessions) >= self.open_limit and self.waiting:
            oldest = min(self.waiting, key=lambda o: self.last_grant.get(o, -1))
            self._end_session(
                oldest, Ending("stopped", "suite: paused; the allocation went to other tasks")
            )
        task = self.tasks[arm.ord]
        run_id = task.run_id
        if run_id is None:
            run_id = _new_run_id(task.problem)
            self.archive.set_task_run(self.suite.id, arm.ord, run_id)
            self.tasks[arm.ord] = SuiteTask(task.ord, task.problem, task.config, run_id)
        transfer = None
        if self.related is not None:
            transfer = transfer_source(
                self.archive, self.related[arm.ord], self._task_run, self.config.transfer_rate
            )
        share = SuiteShare(_TaskAllowance(self, arm.ord), self.slots, transfer)
        progress = _TaskProgress(self, arm) if self.progress is not None else None
        if self._run_exists(run_id):
            session = resume_run(run_id, self.db, progress=progress, stop=self.stop, suite=share)
        else:
            config = RunConfig.from_dict(
                {**task.config, "budget": arm.cap}, origin=f"suite task {task.problem}"
            )
            session = start_run(
                config, self.db, progress=progress, stop=self.stop, run_id=run_id, suite=share
            )
        self.ended_by_suite.discard(arm.ord)
        self.sessions[arm.ord] = asyncio.ensure_future(session)
        self.opened.set()

    def _ended(self, ord: int, session: asyncio.Task[Any]) -> None:
        """A task's session ended: by the suite (paused, or the budget is spent), by a stop,
        or by itself (then the task is retired and gives back what it did not spend)."""
        arm = self.arms[ord]
        arm.busy = False
        self._refresh(arm)
        if session.cancelled():
            return
        exc = session.exception()
        if exc is not None and not isinstance(exc, SeedError):
            # A setting or a host problem (every task would fail), or a bug: stop the suite.
            log.error("suite %s: task %s: %s", self.suite.id, arm.name, exc)
            self.error = self.error or exc
            self.stop.set()
            return
        if exc is not None:
            status, reason = "failed", str(exc)
        else:
            report = session.result()[1]
            status, reason = report.status, report.reason
        if ord in self.ended_by_suite or (status == "stopped" and self.stop.is_set()):
            if arm.live and arm.cap > arm.spent and not self.stop.is_set():
                arm.busy = True  # granted again while its paused session was ending
                self._open(arm)
            return
        # It ended by itself: retire it and give back what it did not spend.
        arm.live = False
        if status == "failed":
            self.failures.append(f"{arm.name} failed: {reason}")
        self.archive.record_grant(
            self.suite.id,
            ord,
            arm.spent - arm.cap,
            spent=arm.spent,
            gain=arm.gain,
            why=f"{ENDED}{status}: {reason}"[:500],
        )
        arm.cap = arm.spent
        self._tell(f"{arm.name}: {status} ({reason[:120]})")

    # --- the end ------------------------------------------------------------------------------

    def _report(self) -> SuiteReport:
        if self.error is not None:
            status, reason = "failed", f"{type(self.error).__name__}: {self.error}"
        elif self.stop.is_set():
            status, reason = "stopped", "stopped; `evoforge resume` continues it"
        else:
            status, budget = "finished", self.suite.budget
            unspent = budget - sum(a.spent for a in self.arms)
            reason = f"budget of {budget} evaluations spent across {len(self.arms)} tasks"
            if unspent > 0:
                reason = f"every task ended; {unspent} of the {budget} evaluations unspent"
                failures = [why for why in self.failures if why]
                if failures:  # they failed (a model outage, a failed seed): say so, exit 1
                    status = "failed"
                    reason += f" (a task {failures[0][:600]})"
        self._finish(status, reason)
        if self.error is not None:
            raise self.error
        results = [self._result(arm) for arm in self.arms]
        return SuiteReport(self.suite.id, status, reason, results, list(self.arms))

    def _finish(self, status: str, reason: str) -> None:
        with self.archive.transaction():
            self.archive.update_suite(self.suite.id, status=status, stop_reason=reason)
            if status == "finished":  # tasks paused on the way finished with the suite
                for task in self.tasks:
                    if task.run_id and self._run_exists(task.run_id):
                        run = self.archive.run(task.run_id)
                        if run.status == "stopped":
                            self.archive.update_run(
                                task.run_id, status="finished", stop_reason=reason
                            )
        self._tell(f"suite {status}: {reason}")

    def _result(self, arm: Arm) -> TaskResult:
        task = self.tasks[arm.ord]
        if task.run_id is None or not self._run_exists(task.run_id):
            return TaskResult(task.problem, None, "not started", "no evaluations were granted")
        return task_result(self.db, task.problem, task.run_id)

    def _tell(self, note: str) -> None:
        if self.progress is not None:
            self.progress.allocation(self.archive.suite(self.suite.id), self.arms, note)


class _TaskProgress:
    """A task session's progress receiver: forwards its snapshots to the suite's display."""

    def __init__(self, scheduler: Scheduler, arm: Arm) -> None:
        self.scheduler, self.arm = scheduler, arm

    def update(self, snapshot: Snapshot) -> None:
        assert self.scheduler.progress is not None
        self.scheduler.progress.task(self.arm, snapshot)


def _new_run_id(problem: str) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    slug = re.sub(r"[^A-Za-z0-9_.]+", "_", problem).strip("_.") or "run"
    return f"{slug}-{stamp}-{secrets.token_hex(3)}"


@contextlib.contextmanager
def _stop_on_signals(stop: asyncio.Event, enabled: bool) -> Iterator[None]:
    """SIGINT and SIGTERM set ``stop`` (every task stops cleanly); the handlers installed
    before are restored afterwards. Main thread only."""
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    previous = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS}
    for signum in _STOP_SIGNALS:
        loop.add_signal_handler(signum, stop.set)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, handler)
