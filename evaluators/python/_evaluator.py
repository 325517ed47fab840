"""The ``python`` evaluator: any Python candidate, run in a pool of sandboxed fork servers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any, ClassVar

from evoforge.archive import EvalResult, Status
from evoforge.base import jsonio
from evoforge.evaluators import (
    Availability,
    Evaluator,
    classify_metrics,
    run_cascade,
    timing as cpu_timing,
)
from evoforge.evaluators.devices import cpu_fingerprint
from evoforge.evaluators.python._forkserver import CANDIDATE_PID_FILE
from evoforge.evaluators.sandbox import (
    ProtocolError,
    SandboxError,
    SandboxOptions,
    dumps,
    encode_frame,
    read_frame_async,
    remove_stale_cgroups,
    remove_workdir,
    server_env,
)
from evoforge.evaluators.tuning import evaluate_tuned

if TYPE_CHECKING:
    from evoforge.problems import Problem, Stage

_SAFETY_MARGIN_S = 10.0
# How a call to a fork server can fail: it hung up, did not answer, or answered nonsense.
_SERVER_FAILURES = (
    TimeoutError,
    asyncio.IncompleteReadError,
    ConnectionError,
    ProtocolError,
    OSError,
    ValueError,
    KeyError,
    TypeError,
)


class PythonEvaluator(Evaluator):
    """Runs candidates that define the problem's ``entry`` function, in fork servers.

    Each of ``workers`` fork servers (``python -m evoforge.evaluators.python``) imports the
    problem's ``preload`` modules once and forks one sandboxed child per candidate, so a candidate
    costs a fork, not an interpreter start. The child calls ``entry()``; its return value comes back
    as JSON; the problem's ``evaluate(output)`` scores it in a separate trusted process that
    candidates cannot read; this class checks the metrics against the declared objectives and
    descriptors. See :mod:`evoforge.evaluators.sandbox._report` for the containment.

    Sandbox settings come from the spec's ``options`` mapping:

    - ``sandbox_user`` (default ``"nobody"``): when the server runs as root, candidates run as
      this user, so they cannot write root's files or read root's processes, and
      ``RLIMIT_NPROC`` holds. When that user cannot reach the Python installation (a venv or
      an interpreter under a 0700 home), the folders in the way are covered, in each
      candidate's mount namespace, by an empty traversable ``tmpfs`` with the installation
      (and the project's packages) bound back at their own paths. Candidates never run as the
      host's uid 0 unless ``sandbox_allow_root`` is True: ``None`` (keep the server's user)
      or no way to give the user the installation refuses to start, saying how to fix it.
      :attr:`sandbox_info` ``["user"]`` (recorded in the run's start event) says whom they
      ran as.
    - ``sandbox_env`` (default none): names of variables candidates get from the engine's
      environment besides ``PATH``, the locale, ``PYTHONPATH`` and the like
      (:data:`~evoforge.evaluators.sandbox.ENV_NAMES`): the environment is an allow-list.
    - ``sandbox_namespaces`` (default True), ``sandbox_cgroup`` (default True),
      ``sandbox_unix_sockets`` (default False): see below.
    - ``sandbox_visible_paths`` (default none): data files and folders candidates must read
      that lie in a folder covered from them (``/home``, ``/root``, ``/srv``, ``/mnt``,
      ``/media``, ``/opt``, ``/var`` are empty for candidates but for what they import).
    - ``sandbox_disk_mb`` (default half of ``memory_mb``): the candidate's disk quota; its
      workdir (also ``HOME`` and ``TMPDIR``) is a private ``tmpfs`` of that size, and writing
      more ends the run ``disk_limit``.
    - ``sandbox_network`` (default ``"server"``): ``"server"`` gives each fork server one empty
      network namespace shared by its candidates (no per-candidate cost); ``"candidate"`` one
      per candidate (about +1 ms each); ``"host"`` leaves the network reachable.
    - ``score_timeout_s`` (default 60): how long one ``evaluate()`` call may take.
    - ``sandbox_prefork`` (default True): fork each candidate's process right after the
      previous answer, so a request only wakes a prepared child (about 1 ms less latency when
      requests have gaps between them; the same work either way).
    - ``sandbox_filesystem`` (default True): each candidate runs in a private mount namespace
      (:mod:`evoforge.evaluators.sandbox._mount_plan`) where only its working directory (also
      ``HOME`` and ``TMPDIR``) and a private ``/dev/shm`` can be written, and every other mount is
      read-only, ``nosuid`` and ``nodev``; only ``/dev/null`` and the like (and accelerators)
      can be opened; and the problem's folder (a one-file problem: its spec file), the
      ``sandbox_hidden_paths`` (relative ones start at the spec's folder) and the server
      user's credential files (``~/.ssh``, ``~/.aws``, ...) are covered by empty mounts. As
      root this is a plain mount namespace; as another user, a user namespace. Where the
      host allows neither, :attr:`sandbox_info` ``["filesystem"]`` says so and why.

    Cascade: when the problem declares ``stages``, each stage is one request (the candidate is
    run afresh with the stage's ``args``, ``kwargs`` and limits, and scored by the stage's function
    in the scorer), folded by :func:`~evoforge.evaluators.run_cascade`; a candidate that
    fails a stage is not run again. Without ``stages``, one request, as before.

    The fork servers get an environment built from an allow-list (see ``sandbox_env``), so
    no secret of the engine's environment reaches a candidate, whatever its name.

    Every candidate also loses all its capabilities (with ``PR_SET_NO_NEW_PRIVS``; see
    :mod:`evoforge.evaluators.sandbox._caps`), so one that runs as root is an ordinary owner of
    root's files. Where the host allows (:attr:`sandbox_info` says, and why not): each candidate
    is the first process of a PID namespace of its own, with its own read-only ``/proc`` (it sees
    no other process, so it can neither read their command lines nor signal them, and everything
    it started dies with it) and of an IPC namespace of its own (System V objects and POSIX
    queues die with it); a seccomp filter refuses UNIX-domain sockets (no host service's socket
    file can be reached; stream socket pairs still work); and a cgroup limits and accounts the
    memory of its whole process tree (``memory_mb`` for all its processes together, the tree's
    peak as ``max_rss_mb``; the kernel's kill for it is ``memory_limit``). Descriptors are
    limited to 1024. Prevented, as root too (``tests/evaluators/test_hostile*.py`` try each):
    writing outside the working directory (``/tmp``, ``$HOME``, the project, ``/etc``); reading
    the problem's folder or credential files; remounting, unmounting or mounting; opening disks
    and other devices; reading the memory, environment or descriptors of the fork server, the
    scorer, the engine or any other process; the network (modes ``server`` and ``candidate``);
    host UNIX sockets; shared IPC; processes outliving the evaluation; timings from a patched
    clock (the server measures). Whatever the candidate returns or ``evaluate()`` echoes (any
    type, size, depth or number) ends as a typed status (:func:`~evoforge.base.jsonio.sanitize`
    bounds it), never as an engine failure.

    Not prevented: reading other files the candidate's user can read (the Python
    installation, the project's sources, ``/etc``); filling the disk through its working
    directory with many files of up to 64 MiB each. Without PID namespaces (a host that
    refuses them), candidates of two workers can signal each other (same user), and a root
    candidate (``sandbox_allow_root``) any process of uid 0.

    Example::

        async with PythonEvaluator(load_problem("problems/builtin/circle_packing"),
                                   workers=2) as evaluator:
            result = await evaluator.evaluate(source)
    """

    name: ClassVar[str] = "python"
    targets: ClassVar[tuple[str, ...]] = ("cpu",)

    def __init__(
        self, problem: Problem, *, workers: int = 1, start_timeout_s: float = 120.0
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        super().__init__(problem, workers=workers)
        self._sandbox = SandboxOptions.of(problem)
        self._user, self._network = self._sandbox.sandbox_user, self._sandbox.sandbox_network
        self._score_timeout_s = self._sandbox.score_timeout_s
        self._prefork = self._sandbox.sandbox_prefork
        self._start_timeout_s = start_timeout_s
        self._safety_s = problem.timeout_s + self._score_timeout_s + _SAFETY_MARGIN_S
        self._idle: asyncio.Queue[_Server | None] = asyncio.Queue()
        self._servers: set[_Server] = set()
        self._dying: set[_Server] = set()  # killed, not yet reaped and cleaned up
        self._background: set[asyncio.Task[None]] = set()
        self._failure = ""
        self._state = "new"  # new -> started -> closed
        self.sandbox_info: dict[str, Any] = {}
        """What the fork servers reported about their isolation (network, user, ...)."""

    @classmethod
    def availability(cls) -> Availability:
        if not hasattr(os, "fork"):
            return Availability(False, "needs os.fork (Linux or macOS); this platform has none")
        if not sys.platform.startswith(("linux", "darwin")):
            return Availability(False, f"supports Linux and macOS, not {sys.platform}")
        return Availability(True)

    @classmethod
    def unmeasurable(cls, problem: Problem) -> dict[str, str]:
        """Callgrind objectives (``options["cpu_timing"] = "callgrind"``) without valgrind."""
        return cpu_timing.unmeasurable(problem)

    async def start(self) -> None:
        """Start ``workers`` fork servers and wait until each has imported the problem.

        Raises:
            SandboxError: a server did not start (bad spec, failing preload import, ...).
            RuntimeError: ``start()`` was already called.
        """
        if self._state != "new":
            raise RuntimeError(f"start() was already called (the evaluator is {self._state})")
        self._state = "started"
        results = await asyncio.gather(
            *(self._spawn() for _ in range(self.workers)), return_exceptions=True
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            await self.close()
            raise errors[0]
        for server in results:
            self._idle.put_nowait(server)  # type: ignore[arg-type]

    async def evaluate(self, source: str) -> EvalResult:
        """Run ``source`` in a sandbox and score it. Never raises for a bad candidate.

        Raises:
            RuntimeError: called before ``start()`` or after ``close()``.
            SandboxError: a dead worker could not be restarted (the host, not the candidate).
        """
        if self._state != "started":
            raise RuntimeError(
                "call `await evaluator.start()` (or use `async with`) before evaluate()"
                if self._state == "new"
                else "the evaluator is closed"
            )
        return await evaluate_tuned(self.problem, source, self._evaluate_once)

    async def run_stage(self, source: str, stage: Stage) -> EvalResult:
        """Run and score one stage of ``source`` (held-out stages, tuning trials)."""
        return await self._run(source, stage)

    async def _evaluate_once(self, source: str, upto: str | None = None) -> EvalResult:
        """One evaluation of ``source``: the cascade (up to stage ``upto``), or one run."""
        stages = self.problem.stages
        if stages:
            if upto is not None:
                stages = stages[: [s.name for s in stages].index(upto) + 1]
            return await run_cascade(
                stages,
                lambda stage: self._run(source, stage),
                problem=self.problem,
                partial=upto is not None,
            )
        result = await self._run(source, None)
        return await cpu_timing.measure(self.problem, source, result)  # options["cpu_timing"]

    async def close(self) -> None:
        """Stop every fork server (idle ones cleanly, busy ones killed). Safe to call twice."""
        if self._state == "closed":
            return
        self._state = "closed"
        for task in list(self._background):
            task.cancel()
        idle = set()
        while not self._idle.empty():
            idle.add(self._idle.get_nowait())
        self._failure = "the evaluator was closed while this evaluation waited for a worker"
        self._idle.put_nowait(None)  # wakes evaluate() calls still waiting for a server
        servers, self._servers = list(self._servers), set()
        for server in servers:
            if server in idle:
                server.hang_up()
            else:
                server.kill()
        servers += self._dying  # their respawn tasks were cancelled above, maybe mid-cleanup
        await asyncio.gather(
            *(s.finish(grace_s=2.0) for s in servers), *self._background, return_exceptions=True
        )

    # -----------------------------------------------------------------------------------------

    async def _run(self, source: str, stage: Stage | None) -> EvalResult:
        """Run ``source`` once on a fork server: the whole evaluation, or one cascade stage."""
        server = await self._idle.get()
        if server is None:  # a worker could not be restarted; let other callers see it too
            self._idle.put_nowait(None)
            raise SandboxError(self._failure)
        problem = self.problem
        fields: dict[str, Any] = {
            "source": source,
            "entry": problem.entry,
            "timeout_s": problem.timeout_s,
            "memory_mb": problem.memory_mb,
        }
        safety_s = self._safety_s
        if stage is not None:  # one stage of a cascade: its input, limits and scoring function
            fields.update(
                timeout_s=stage.timeout_s,
                memory_mb=stage.memory_mb,
                args=list(stage.args),
                kwargs=dict(stage.kwargs),
                evaluate=stage.evaluate,
            )
            safety_s = stage.timeout_s + self._score_timeout_s + _SAFETY_MARGIN_S
        request = encode_frame(dumps(fields))
        start = time.perf_counter()
        try:
            async with asyncio.timeout(safety_s):  # no extra task, unlike wait_for
                response = await server.call(request)
            # A stage's metrics are checked by run_cascade (only the last holds objectives).
            result = self._result(response, time.perf_counter() - start, classify=stage is None)
        except BaseException as exc:
            # The server's state is unknown (a half-read answer, a candidate still running):
            # never reuse it. This also covers cancellation, e.g. on SIGINT.
            try:
                if not isinstance(exc, TimeoutError | asyncio.CancelledError):
                    with contextlib.suppress(TimeoutError):  # it hung up: learn how it died
                        await asyncio.wait_for(asyncio.shield(server.proc.wait()), 0.5)
            finally:
                self._replace(server)
            if not isinstance(exc, _SERVER_FAILURES):
                raise
            return self._worker_failed(exc, server, time.perf_counter() - start, safety_s)
        self._idle.put_nowait(server)
        return result

    async def _spawn(self) -> _Server:
        problem = self.problem
        # Made here, so it is removed even if the server dies before its handshake.
        workdir_root = tempfile.mkdtemp(prefix="evoforge-")
        argv = [
            sys.executable,
            "-m",
            "evoforge.evaluators.python",
            str(problem.spec_path),
            "--preload",
            ",".join(problem.preload),
            "--network",
            self._network,
            "--user",
            "" if self._user is None else str(self._user),
            "--score-timeout",
            repr(self._score_timeout_s),
            "--workdir-root",
            workdir_root,
            "--disk-mb",
            str(self._sandbox.disk_mb(problem.memory_mb)),
        ]
        if not self._prefork:
            argv.append("--no-prefork")
        if self._sandbox.sandbox_allow_root:
            argv.append("--allow-root")
        if self._sandbox.sandbox_unix_sockets:
            argv.append("--unix-sockets")
        if not self._sandbox.sandbox_namespaces:
            argv.append("--no-namespaces")
        if not self._sandbox.sandbox_cgroup:
            argv.append("--no-cgroup")
        argv += self._sandbox.filesystem_arguments(problem)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=server_env(self._sandbox.sandbox_env, home=workdir_root),
                start_new_session=True,
            )  # SIGINT at the terminal: ours alone
        except BaseException:
            remove_workdir(workdir_root)
            raise
        server = _Server(proc, workdir_root)
        self._servers.add(server)
        try:
            hello = json.loads(
                await asyncio.wait_for(
                    read_frame_async(proc.stdout),  # type: ignore[arg-type]
                    self._start_timeout_s,
                )
            )
            if not hello.get("ready"):
                raise SandboxError(hello.get("error", "no reason given"))
        except BaseException as exc:
            self._servers.discard(server)
            server.kill()
            await server.finish(grace_s=0.0)
            if isinstance(exc, asyncio.CancelledError):
                raise
            why = (
                str(exc)
                if isinstance(exc, SandboxError)
                else (f"no handshake ({type(exc).__name__}: {exc}); see its stderr")
            )
            raise SandboxError(
                f"the fork server for problem {problem.name!r} "
                f"({problem.spec_path}) did not start: {why}"
            ) from None
        self.sandbox_info = {k: v for k, v in hello.items() if k not in ("ready", "pid")}
        return server

    def _replace(self, server: _Server) -> None:
        """Kill ``server`` now and start a replacement in the background."""
        server.kill()
        self._servers.discard(server)
        self._dying.add(server)
        task = asyncio.get_running_loop().create_task(self._respawn(server))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _respawn(self, old: _Server) -> None:
        """Clean up after ``old`` and start its replacement; when that fails, for any reason,
        every waiting and later ``evaluate()`` raises :class:`SandboxError` saying why (the
        run fails loudly instead of waiting forever for a worker that never comes)."""
        try:
            await old.finish(grace_s=0.0)
            self._dying.discard(old)
            if self._state == "closed":
                return
            new = await self._spawn()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            why = str(exc) if isinstance(exc, SandboxError) else f"{type(exc).__name__}: {exc}"
            self._failure = f"a sandbox worker died and could not be replaced: {why}"
            self._idle.put_nowait(None)
            return
        if self._state == "closed":
            new.kill()
            await new.finish(grace_s=0.0)
        else:
            self._idle.put_nowait(new)

    def _worker_failed(
        self, exc: BaseException, server: _Server, caller_s: float, safety_s: float
    ) -> EvalResult:
        if isinstance(exc, TimeoutError):
            why = (
                f"the sandbox worker did not answer within {safety_s:g} s (the "
                "candidate's limit plus evaluate()'s plus a margin); it was killed and replaced"
            )
        elif isinstance(exc, ValueError | KeyError | TypeError):
            why = (
                f"the sandbox worker sent a malformed answer ({type(exc).__name__}: {exc}); "
                "it was killed and replaced"
            )
        else:
            why = (
                f"the sandbox worker died during the evaluation "
                f"({_describe_exit(server.proc.returncode)}); it was replaced. A candidate "
                "that kills its server process causes this"
            )
        return EvalResult(
            Status.CRASHED,
            artifacts={"error": why},
            timings={"caller_s": caller_s},
            device=cpu_fingerprint(),
        )

    def _result(self, response: dict[str, Any], caller_s: float, *, classify: bool) -> EvalResult:
        status = Status(response["status"])
        artifacts = {str(k): str(v) for k, v in response.get("artifacts", {}).items()}
        timings = {str(k): float(v) for k, v in response.get("timings", {}).items()}
        timings["caller_s"] = caller_s
        metrics = jsonio.sanitize(response.get("metrics") or {}, strict=False)
        if not isinstance(metrics, dict):
            raise TypeError(f"the metrics are a {type(metrics).__name__}, not a dict")
        objectives: dict[str, float] = {}
        descriptors: dict[str, float] = {}
        if status is Status.OK and classify:
            status, error, objectives, descriptors = classify_metrics(self.problem, metrics)
            if error:
                artifacts["error"] = error
        return EvalResult(
            status, metrics, objectives, descriptors, artifacts, timings, cpu_fingerprint()
        )


class _Server:
    """One fork server process and how to stop it."""

    def __init__(self, proc: asyncio.subprocess.Process, workdir_root: str) -> None:
        self.proc = proc
        self.workdir_root = workdir_root

    async def call(self, frame: bytes) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(frame)
        await self.proc.stdin.drain()
        answer = jsonio.loads_untrusted(await read_frame_async(self.proc.stdout))
        if not isinstance(answer, dict):
            raise ValueError(f"the answer is a {type(answer).__name__}, not a dict")
        return answer

    def hang_up(self) -> None:
        """Close its stdin: it finishes cleanly (scorer and workdir included) and exits."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()

    def kill(self) -> None:
        """SIGKILL the server, its scorer (same process group) and the running candidate's group."""
        candidate = self._candidate_pgid()
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        if candidate:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(candidate, signal.SIGKILL)

    async def finish(self, grace_s: float) -> None:
        """Wait for exit (killing after ``grace_s``), then remove what it left on disk."""
        try:
            await asyncio.wait_for(asyncio.shield(self.proc.wait()), grace_s or 0.001)
        except TimeoutError:
            self.kill()
            await self.proc.wait()
        if self.workdir_root:
            await asyncio.to_thread(remove_workdir, self.workdir_root)
        # A server killed before it could remove its candidates' cgroup: remove it here.
        await asyncio.to_thread(remove_stale_cgroups, self.proc.pid)

    def _candidate_pgid(self) -> int:
        if not self.workdir_root:
            return 0
        try:
            with open(os.path.join(self.workdir_root, CANDIDATE_PID_FILE), "rb") as f:
                return int(f.read(64).strip() or 0)
        except (OSError, ValueError):
            return 0


def _describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "it stopped answering"
    if returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with code {returncode}"
