"""The controller's side of the proposal workers: a pool of processes and in-process fallback.

:class:`ProposalPool` starts ``processes`` workers (``python -m evoforge.evolve.proposals``),
sends each request to the ready worker with the fewest requests in flight, and resolves the
request's future when its proposal comes back (:meth:`ProposalPool.ask` does the same for a
plain :class:`~evoforge.evolve.proposals.Question`). The controller's event loop then only encodes
a request and decodes a proposal (tens of microseconds); the prompt, litellm's per-call Python
(milliseconds), answer parsing, the edit and the syntax check run in the workers, on other
cores. Workers start while the seed is evaluated; the first request goes out as soon as one is
ready.

What a worker learns of a model's server (its real window, its tokenizer) comes back to the
pool, which passes it on to the other workers and to any it starts later
(:mod:`~evoforge.evolve.proposals._calibration`).

A worker that dies is replaced (at most :data:`MAX_RESTARTS` times per session) and its
requests are sent again, once: a request that loses a second worker fails the session with
:class:`ProposalError` (resumable) rather than killing workers forever.

:class:`LocalProposer` runs the same :func:`~evoforge.evolve.proposals.propose` on the
controller's loop: for models whose provider plugin was registered in this process only
(``pm.register``), which a worker process cannot load.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evoforge.evolve.proposals import _calibration as calibration, _frames
from evoforge.evolve.proposals._messages import (
    Answer,
    Proposal,
    ProposalRequest,
    ProposalSetup,
    Question,
)
from evoforge.evolve.proposals._propose import ask, propose
from evoforge.evolve.proposals._worker import WorkerStats

log = logging.getLogger("evoforge")

MAX_RESTARTS = 8
"""Workers replaced per session before the session fails."""
STOP_GRACE_S = 10.0
"""How long a stopping worker may take to end its calls and exit before it is killed."""


class ProposalError(RuntimeError):
    """Proposal workers could not do their job (did not start, or kept dying); the message
    says what happened. The run can be resumed once the cause is fixed."""


class _WorkerLost(Exception):
    """The worker holding a request died before answering it."""


def default_processes(cpus: int | None = None) -> int:
    """Proposal workers for a host with ``cpus`` cores: half of them, 1 to 16.

    One worker serves many model calls at once (they wait on the network); each costs a
    few ms of CPU per call in litellm, so half the cores leaves the rest to evaluations and
    the controller.
    """
    cpus = cpus or os.cpu_count() or 1
    return max(1, min(16, cpus // 2))


@dataclass
class PoolStats:
    """What the proposal side of a session spent (see :class:`WorkerStats`)."""

    workers: list[WorkerStats] = field(default_factory=list)
    restarts: int = 0

    @property
    def requests(self) -> int:
        return sum(w.requests for w in self.workers)

    def total(self, name: str) -> float:
        return sum(getattr(w, name) for w in self.workers)


class _Process:
    """One worker process and the requests it holds."""

    def __init__(self, index: int, proc: asyncio.subprocess.Process) -> None:
        self.index = index
        self.proc = proc
        self.pending: dict[tuple[str, int], asyncio.Future[Any]] = {}  # by (kind, seq)
        self.ready = False
        self.stopping = False
        self.stats: WorkerStats | None = None
        self.failure = ""
        self.reader_task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return (
            self.proc.returncode is None
            and self.reader_task is not None
            and (not self.reader_task.done())
        )

    def send(self, message: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(_frames.encode(message))


class ProposalPool:
    """Proposal worker processes for one session.

    Lifecycle: ``await start()`` (returns at once; workers get ready in the background),
    ``await propose(request)`` concurrently, ``await close()`` (returns the workers' stats).

    Args:
        setup: what every proposal of the session shares.
        processes: how many workers.
        start_timeout_s: how long a worker may take to get ready (imports litellm).
    """

    def __init__(
        self, setup: ProposalSetup, processes: int, *, start_timeout_s: float = 180.0
    ) -> None:
        if processes < 1:
            raise ValueError(f"a proposal pool needs at least 1 process, not {processes}")
        self.setup = setup
        self.processes = processes
        self.start_timeout_s = start_timeout_s
        self.stats = PoolStats()
        self._workers: list[_Process] = []
        self._changed = asyncio.Event()  # a worker got ready or died
        self._background: set[asyncio.Task[Any]] = set()
        self._closed = False
        self._failures: list[str] = []
        self._replacing = 0  # replacements being started: a lost worker is not the end

    async def start(self) -> None:
        """Start the workers; they get ready (import litellm, set models up) meanwhile.
        Calling it again does nothing."""
        if self._workers or self._closed:
            return
        for index in range(self.processes):
            self._workers.append(await self._spawn(index))

    async def wait_ready(self) -> None:
        """Return once a worker is ready (or raise :class:`ProposalError`: none can be)."""
        await self._ready_worker()

    async def propose(self, request: ProposalRequest) -> Proposal:
        """The proposal for ``request``, from whichever worker is least busy.

        Cancelling the awaiting task cancels the request in its worker.

        Raises:
            ProposalError: no worker could start, or the request lost two workers.
            Exception: what ``propose`` raised in the worker for this request (a problem
                bug, such as a broken prompt template), with the worker's traceback noted.
        """
        proposal: Proposal = await self._call("propose", request.seq, request)
        return proposal

    async def ask(self, question: Question) -> Answer:
        """The model's answer to ``question`` (no edit applied), from the least busy worker.

        Cancelling the awaiting task cancels the call in its worker.

        Raises:
            ProposalError: no worker could start, or the question lost two workers.
        """
        answer: Answer = await self._call("ask", question.seq, question)
        return answer

    async def _call(self, kind: str, seq: int, body: Any) -> Any:
        """Send ``(kind, body)`` to a worker and await its reply, matched by ``(kind, seq)``;
        sent again, once, when the worker dies first."""
        key = (kind, seq)
        what = "candidate" if kind == "propose" else "question"
        for attempt in range(2):
            worker = await self._ready_worker()
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            worker.pending[key] = future
            try:
                worker.send((kind, body))
                return await future
            except _WorkerLost as lost:
                if attempt:
                    raise ProposalError(
                        f"{what} {seq}: two proposal workers died while handling "
                        f"it ({lost}); see the messages above, then `evoforge resume` the run"
                    ) from None
            except asyncio.CancelledError:
                if worker.pending.pop(key, None) is not None and worker.alive:
                    with contextlib.suppress(Exception):
                        worker.send(("cancel", key))
                raise
            finally:
                worker.pending.pop(key, None)
        raise AssertionError("unreachable")

    async def close(self) -> PoolStats:
        """Stop every worker (in-flight calls cancelled, model clients closed); their stats."""
        if self._closed:
            return self.stats
        self._closed = True
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await asyncio.gather(*(self._stop(w) for w in self._workers), return_exceptions=True)
        self.stats.workers = [w.stats for w in self._workers if w.stats is not None]
        return self.stats

    # -----------------------------------------------------------------------------------------

    async def _spawn(self, index: int) -> _Process:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "evoforge.evolve.proposals",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            start_new_session=True,  # Ctrl-C reaches the controller, which stops us
            limit=_frames.MAX_FRAME,
        )
        worker = _Process(index, proc)
        worker.send(("setup", self.setup))
        if learned := calibration.snapshot():  # a replacement starts from what was learned
            worker.send(("learned", learned))
        worker.reader_task = asyncio.get_running_loop().create_task(self._read(worker))
        return worker

    async def _ready_worker(self) -> _Process:
        """The ready worker with the fewest requests in flight (waits for one to be ready)."""
        deadline = asyncio.get_running_loop().time() + self.start_timeout_s
        while True:
            ready = [w for w in self._workers if w.ready and w.alive]
            if ready:
                return min(ready, key=lambda w: (len(w.pending), w.index))
            if self._closed:
                raise ProposalError("the proposal workers were stopped")
            if self._workers and not self._replacing and all(w.failure for w in self._workers):
                reasons = "; ".join(dict.fromkeys(w.failure for w in self._workers))
                raise ProposalError(f"no proposal worker could start: {reasons}")
            self._changed.clear()
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise ProposalError(
                    f"no proposal worker got ready within {self.start_timeout_s:g} s "
                    "(importing litellm and setting the models up); is the host overloaded?"
                )
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._changed.wait()

    async def _read(self, worker: _Process) -> None:
        assert worker.proc.stdout is not None
        why = ""
        try:
            while True:
                message = await _frames.read(worker.proc.stdout)
                if message is None:
                    break
                self._handle(worker, message)
                if message[0] == "stats":
                    return
        except _frames.FrameError as exc:
            why = str(exc)
        finally:
            if not worker.stopping:
                await self._lost(worker, why)

    def _handle(self, worker: _Process, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind in ("proposal", "answer"):
            reply: Proposal | Answer = message[1]
            key = ("propose" if kind == "proposal" else "ask", reply.seq)
            future = worker.pending.pop(key, None)
            if future is not None and not future.done():
                future.set_result(reply)
        elif kind == "error":
            future = worker.pending.pop(tuple(message[1]), None)
            if future is not None and not future.done():
                future.set_exception(message[2])
        elif kind == "learned":
            if calibration.merge(message[1]):  # new here: every other worker hears of it
                facts = calibration.snapshot()
                for other in self._workers:
                    if other is not worker and other.alive and not other.stopping:
                        with contextlib.suppress(Exception):
                            other.send(("learned", facts))
        elif kind == "ready":
            worker.ready = True
            self._changed.set()
        elif kind == "fatal":
            worker.failure = str(message[1])
            self._changed.set()
        elif kind == "stats":
            worker.stats = message[1]

    async def _lost(self, worker: _Process, why: str) -> None:
        """A worker ended unasked: fail its requests (they are retried once) and replace it."""
        with contextlib.suppress(ProcessLookupError):
            worker.proc.kill()
        code = await worker.proc.wait()
        detail = worker.failure or why or _describe_exit(code)
        if not worker.failure:
            worker.failure = f"proposal worker {worker.proc.pid} ended: {detail}"
        for future in worker.pending.values():
            if not future.done():
                future.set_exception(_WorkerLost(worker.failure))
        worker.pending.clear()
        self._changed.set()
        if self._closed or not worker.ready:
            return  # one that never got ready has a set-up problem: a new one would too
        if self.stats.restarts >= MAX_RESTARTS:
            log.error("%s; not replaced (%d replaced already)", worker.failure, MAX_RESTARTS)
            return
        self.stats.restarts += 1
        self._replacing += 1
        log.warning("%s; starting a replacement", worker.failure)
        task = asyncio.get_running_loop().create_task(self._replace(worker))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _replace(self, old: _Process) -> None:
        try:
            new = await self._spawn(old.index)
            self._workers[self._workers.index(old)] = new
        finally:
            self._replacing -= 1
            self._changed.set()

    async def _stop(self, worker: _Process) -> None:
        worker.stopping = True
        if not worker.ready and worker.proc.returncode is None:
            # Still starting: importing litellm (seconds, more on a busy host), and it reads
            # no frame before that is done, so a "stop" would wait for the whole import (past
            # the grace period on a loaded machine: the session whose seed was refused then
            # ended with "did not stop ... killed"). It holds no call and has no stats yet:
            # end it now. Before its event loop runs, SIGTERM's default action ends it; after,
            # its handler stops it as a "stop" frame would.
            with contextlib.suppress(ProcessLookupError):
                worker.proc.terminate()
        if worker.proc.returncode is None:
            with contextlib.suppress(Exception):
                worker.send(("stop", None))
                assert worker.proc.stdin is not None
                worker.proc.stdin.close()
        try:
            async with asyncio.timeout(STOP_GRACE_S):
                if worker.reader_task is not None:
                    await asyncio.shield(worker.reader_task)
                await worker.proc.wait()
        except TimeoutError:
            log.warning(
                "proposal worker %d did not stop within %g s; killed", worker.proc.pid, STOP_GRACE_S
            )
            with contextlib.suppress(ProcessLookupError):
                worker.proc.kill()
            await worker.proc.wait()
        finally:
            if worker.reader_task is not None:
                worker.reader_task.cancel()
                with contextlib.suppress(BaseException):
                    await worker.reader_task
            for future in worker.pending.values():
                if not future.done():
                    future.cancel()


class LocalProposer:
    """Proposals on the controller's own loop (same interface as :class:`ProposalPool`).

    For models whose provider a worker process cannot load (a plugin registered with
    ``pm.register`` in this process only). Costs the loop litellm's per-call CPU.
    """

    def __init__(self, setup: ProposalSetup) -> None:
        self.setup = setup
        self.stats = PoolStats()
        self._ready: asyncio.Task[Any] | None = None

    async def start(self) -> None:
        """Import litellm and set the models up, off the loop (seconds); returns at once."""
        from evoforge.evolve.models import prepare

        if self._ready is None:
            models = self.setup.models

            def prepare_all() -> None:
                for model in models:
                    prepare(model)

            self._ready = asyncio.get_running_loop().create_task(asyncio.to_thread(prepare_all))

    async def wait_ready(self) -> None:
        """Return once the models are set up."""
        if self._ready is not None:
            await self._ready

    async def propose(self, request: ProposalRequest) -> Proposal:
        await self.wait_ready()
        return await propose(self.setup, request)

    async def ask(self, question: Question) -> Answer:
        """The model's answer to ``question``, asked on this loop."""
        await self.wait_ready()
        return await ask(self.setup, question)

    async def close(self) -> PoolStats:
        if self._ready is not None and not self._ready.done():
            self._ready.cancel()
            await asyncio.gather(self._ready, return_exceptions=True)
        return self.stats


def in_process_providers(models: Sequence[str]) -> list[str]:
    """Prefixes of ``models`` served by a plugin registered in this process only.

    A worker process loads plugins from entry points; one registered with ``pm.register``
    (a test, a notebook) exists only here, with whatever state it holds.
    """
    from evoforge.plugins import collect, load_plugins, named, origins

    load_plugins()
    providers = collect("register_models", "model provider", named("model provider"))
    where = origins()
    prefixes = {m.split("/", 1)[0] for m in models}
    return sorted(
        prefix
        for prefix in prefixes
        if prefix in providers and where.get(providers[prefix][1]) == "registered"
    )


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "it stopped answering"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit status {code}"
