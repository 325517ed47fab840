"""A proposal worker process: ``python -m evoforge.evolve.proposals`` (started by the pool).

It builds prompts, calls models through litellm, applies answers and checks children's syntax
for the controller, many requests at once on one event loop (a model call mostly waits on the
network). Frames (:mod:`evoforge.evolve.proposals._frames`) come in on stdin and go out on a
copy of the original stdout; fd 1 then points at stderr, so nothing litellm or a plugin prints
can corrupt a frame.

Controller to worker: ``("setup", ProposalSetup)`` once, then ``("propose", ProposalRequest)``
and ``("ask", Question)``, ``("cancel", (kind, seq))``, ``("learned", facts)`` (what other
workers learned of the servers, :mod:`~evoforge.evolve.proposals._calibration`) and finally
``("stop", None)``. Worker to controller: ``("ready", info)`` once its models are set up
(litellm imported), ``("learned", facts)`` before a reply when it learned something,
``("proposal", Proposal)``, ``("answer", Answer)``, ``("error", (kind, seq), exception)`` when
a request raised (a problem bug, e.g. broken templates), ``("fatal", message)`` when set-up
failed, and ``("stats", WorkerStats)`` last, on ``stop``. A request is known by its kind and
``seq`` (a question and a proposal may share a number).

Stopping: in-flight calls are cancelled and awaited, coroutines litellm created for them but
never started are closed (:mod:`evoforge.evolve.proposals._executor`), and litellm's cached
HTTP clients are closed, so a run that stops for any reason leaves no "coroutine was never
awaited" warning and no open connection behind. End of input (the controller died, ``kill -9``
included) stops the worker the same way; so does SIGTERM. SIGINT is ignored: the controller
decides when its workers stop.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import pickle
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any

from evoforge.evolve.proposals import _calibration as calibration, _frames
from evoforge.evolve.proposals._executor import CoroutineTrackingExecutor
from evoforge.evolve.proposals._messages import ProposalRequest, ProposalSetup, Question
from evoforge.evolve.proposals._propose import ask, propose

log = logging.getLogger("evoforge")


@dataclass(frozen=True)
class WorkerStats:
    """What a worker spent, for benchmarks (``bench/engine_overhead.py``).

    Attributes:
        pid: the worker's process id.
        requests: proposals and questions it answered.
        setup_s: wall seconds from its start to ready (imports, litellm, model set-up).
        cpu_s: CPU seconds of the whole process from ready to stop, all threads.
        prompt_cpu_s, edit_cpu_s: CPU seconds building prompts; applying answers and checking
            syntax (in ``cpu_s``).
        frame_cpu_s: CPU seconds encoding and decoding frames (in ``cpu_s``).
        closed_unawaited: model-call coroutines closed at stop (calls cancelled mid-way).
    """

    pid: int
    requests: int = 0
    setup_s: float = 0.0
    cpu_s: float = 0.0
    prompt_cpu_s: float = 0.0
    edit_cpu_s: float = 0.0
    frame_cpu_s: float = 0.0
    closed_unawaited: int = 0


class _Worker:
    def __init__(self, writer: asyncio.StreamWriter, started: float) -> None:
        self.writer = writer
        self.started = started
        self.setup: ProposalSetup | None = None
        self.tasks: dict[tuple[str, int], asyncio.Task[None]] = {}  # by (kind, seq)
        self.requests = 0
        self.prompt_cpu = self.edit_cpu = self.frame_cpu = 0.0
        self.cpu_at_ready = 0.0
        self.setup_s = 0.0
        self.learned_version = calibration.version()

    def send(self, message: Any) -> None:
        tick = time.thread_time()
        frame = _frames.encode(message)
        self.frame_cpu += time.thread_time() - tick
        self.writer.write(frame)

    def begin(self, setup: ProposalSetup) -> None:
        from evoforge.evolve.models import prepare

        for model in setup.models:
            prepare(model)  # imports litellm and sets the model's provider up
        self.setup = setup
        self.setup_s = time.monotonic() - self.started
        self.cpu_at_ready = time.process_time()
        self.send(("ready", {"pid": os.getpid(), "setup_s": self.setup_s}))

    def start_request(self, kind: str, request: ProposalRequest | Question) -> None:
        key = (kind, request.seq)
        task = asyncio.get_running_loop().create_task(self._answer(key, request))
        self.tasks[key] = task

    async def _answer(self, key: tuple[str, int], request: ProposalRequest | Question) -> None:
        assert self.setup is not None
        try:
            if isinstance(request, Question):
                reply: Any = ("answer", await ask(self.setup, request))
            else:
                proposal = await propose(self.setup, request)
                self.prompt_cpu += proposal.prompt_cpu_s
                self.edit_cpu += proposal.edit_cpu_s
                reply = ("proposal", proposal)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.send(("error", key, _portable(exc)))
        else:
            self.requests += 1
            self.share_learned()
            self.send(reply)
        finally:
            self.tasks.pop(key, None)
        await self.writer.drain()

    def share_learned(self) -> None:
        """Send what this worker learned of a server since it last did (its window, its
        tokenizer), for the pool to pass on to the other workers."""
        if calibration.version() != self.learned_version:
            self.learned_version = calibration.version()
            self.send(("learned", calibration.snapshot()))

    def learn(self, facts: tuple[calibration.Learned, ...]) -> None:
        """Take what another worker learned; not sent back (the pool has it)."""
        unsent = calibration.version() != self.learned_version
        calibration.merge(facts)
        if not unsent:
            self.learned_version = calibration.version()

    def cancel(self, key: tuple[str, int]) -> None:
        task = self.tasks.get(key)
        if task is not None:
            task.cancel()

    async def stop(self, executor: CoroutineTrackingExecutor) -> WorkerStats:
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.sleep(0)  # let cancelled executor jobs hand over their coroutines
        executor.shutdown(wait=True)
        closed = executor.close_unawaited()
        await _close_model_clients()
        return WorkerStats(
            pid=os.getpid(),
            requests=self.requests,
            setup_s=self.setup_s,
            cpu_s=time.process_time() - self.cpu_at_ready,
            prompt_cpu_s=self.prompt_cpu,
            edit_cpu_s=self.edit_cpu,
            frame_cpu_s=self.frame_cpu,
            closed_unawaited=closed,
        )


async def _close_model_clients() -> None:
    """Close litellm's cached HTTP clients and its logging worker, if litellm was used."""
    litellm = sys.modules.get("litellm")
    if litellm is None:
        return
    close = getattr(litellm, "close_litellm_async_clients", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()
    with contextlib.suppress(Exception):
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

        await GLOBAL_LOGGING_WORKER.flush()
        await GLOBAL_LOGGING_WORKER.stop()


def _portable(exc: BaseException) -> BaseException:
    """``exc`` with the worker's traceback as a note, or a RuntimeError saying what it was
    when it does not survive pickling."""
    where = "".join(traceback.format_exception(exc)).rstrip()
    try:
        exc.add_note(f"in the proposal worker (pid {os.getpid()}):\n{where}")
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}\n{where}")


async def _serve(out_fd: int, started: float) -> int:
    loop = asyncio.get_running_loop()
    executor = CoroutineTrackingExecutor()
    loop.set_default_executor(executor)
    reader = asyncio.StreamReader(limit=_frames.MAX_FRAME)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(out_fd, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    worker = _Worker(writer, started)
    stopping = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stopping.set)
    stop_waiter = loop.create_task(stopping.wait())
    graceful = False
    try:
        while True:
            next_frame = loop.create_task(_frames.read_payload(reader))
            await asyncio.wait({next_frame, stop_waiter}, return_when=asyncio.FIRST_COMPLETED)
            if not next_frame.done():
                next_frame.cancel()
                break
            payload = next_frame.result()
            if payload is None:  # the controller went away: stop, nobody to answer
                break
            tick = time.thread_time()
            kind, body = _frames.decode(payload)[:2]
            worker.frame_cpu += time.thread_time() - tick
            if kind in ("propose", "ask"):
                worker.start_request(kind, body)
            elif kind == "cancel":
                worker.cancel(tuple(body))
            elif kind == "learned":
                worker.learn(body)
            elif kind == "setup":
                try:
                    worker.begin(body)
                except Exception as exc:
                    worker.send(("fatal", f"{type(exc).__name__}: {exc}"))
                    await writer.drain()
                    return 1
            elif kind == "stop":
                graceful = True
                break
    finally:
        stop_waiter.cancel()
        stats = await worker.stop(executor)
    if graceful:
        worker.send(("stats", stats))
        with contextlib.suppress(ConnectionError):
            await writer.drain()
    writer.close()
    return 0


def main() -> int:
    started = time.monotonic()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(Exception):
        from evoforge.evaluators.sandbox import die_with_parent

        die_with_parent()  # Linux: the kernel ends us if the controller is killed
    out_fd = os.dup(1)
    os.dup2(2, 1)  # print() now writes to stderr; frames use the copy of the old stdout
    sys.stdout = sys.stderr
    level = os.environ.get("EVOFORGE_LOG", "warning").upper()
    logging.basicConfig(
        level=getattr(logging, level, logging.WARNING),
        format="evoforge: %(levelname)s: %(message)s",
    )
    from evoforge.evolve.checks import quiet_candidate_warnings
    from evoforge.evolve.models import load_litellm

    quiet_candidate_warnings()  # kept in the program's artifacts by the sandbox instead

    load_litellm()  # the slow part of starting (seconds): before the set-up frame is read
    return asyncio.run(_serve(out_fd, started))


def exit_now(code: int) -> None:
    """End the worker process with ``code`` without tearing its interpreter down.

    Freeing the modules of an interpreter that imported litellm (thousands of pydantic
    models) takes about a second, and the controller waits for its workers to exit at the end
    of every run. By the time :func:`main` returns, everything that has to happen has: calls
    ended, model clients closed, the last frame written. The atexit handlers (litellm's and
    any plugin's) still run and the standard streams are flushed; only the teardown is skipped.
    """
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
