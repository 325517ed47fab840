"""The shared sandbox: run jobs in contained child processes and report what happened.

Every evaluator runs its candidates through :class:`Sandbox` (or the one-shot
:func:`run_sandboxed`), so containment is written once. For each run:

- the child gets its own session and process group (``setsid``); when it ends or overruns, the
  whole group is killed, and descendants that left the group (``setsid`` in a grandchild) are
  found and killed too, because the server is a child subreaper (Linux; see
  :func:`evoforge.evaluators.sandbox._host.harden_server`);
- a fresh, empty working directory is its cwd, ``HOME`` and ``TMPDIR``, and the only place on
  disk it can write: it runs in a private mount namespace where everything else is read-only,
  device nodes other than ``/dev/null`` and friends (and accelerators) cannot be opened,
  ``/dev/shm`` is its own, and hidden paths (the problem's folder, credential files) are
  covered by empty mounts (:mod:`evoforge.evaluators.sandbox._fs`; as root directly, as another user
  through a user namespace, and off, saying why, where the host allows neither);
- no capabilities: a candidate that runs as root cannot remount, unmount, load modules, or
  read other processes' memory (:mod:`evoforge.evaluators.sandbox._caps`), and
  ``PR_SET_NO_NEW_PRIVS`` keeps setuid binaries from giving any back;
- rlimits: address space (``memory_mb``), CPU time (``ceil(timeout_s) + 1`` s, then SIGKILL one
  second later), file size (writes fail with EFBIG instead of killing), no core files, and a
  process count when it runs as a dedicated user (as root, ``RLIMIT_NPROC`` is not enforced);
- stdin is ``/dev/null``; stdout and stderr are pipes the server drains, keeping only the tails,
  so a candidate that prints 100 MB neither fills a disk nor fails;
- optionally: a fresh network namespace, and a drop from root to an unprivileged user, which
  also keeps it away from the signals of root's processes (the server refuses to run
  candidates as root unless asked, see ``candidate_user``);
- a PID namespace and an IPC namespace, where the host allows (``Isolation.namespaces``).
  The PID namespace is the server's candidates' (:mod:`~evoforge.evaluators.sandbox._pidns`):
  a fresh read-only ``/proc`` shows a child only its own processes, so it can neither see
  (command lines, the engine's ``--db``) nor signal anything else, and after each candidate
  everything left in the namespace is killed, ``setsid`` escapees included, before the next
  child is forked. The IPC namespace is made per candidate (System V objects and POSIX queues
  die with it; about 0.15 ms of the child's set-up with the ``proc`` mount, off the latency
  path when the child is forked ahead);
- a seccomp filter that refuses UNIX-domain sockets (:mod:`~evoforge.evaluators.sandbox._seccomp`):
  a host service listening on a socket file stays out of reach;
- a cgroup for the memory of its whole process tree (:mod:`~evoforge.evaluators.sandbox._cgroup`),
  reused by a server's candidates one at a time, and a descriptor limit (``Limits.max_files``);
- a wall-clock deadline enforced by the server (``pidfd`` + ``poll``, no polling sleeps);
- the result comes back over a pipe as one JSON header line plus opaque payload bytes, capped in
  size; nothing from the child is ever unpickled.

Children are forked *before* their request arrives (:meth:`Sandbox.prepare`, called by a
server after it has answered): the fork and the set-up that does not depend on the request
(about 1 ms with numpy loaded on this VM, plus about 0.5 ms for the mount namespace and the
capabilities) then happen off the latency path, and a request only wakes a waiting child.
:attr:`Sandbox.protections` says which protections are on, and why any is off.

The job is a function called in the child with the request bytes; it returns ``(header,
payload)`` where ``header`` is a JSON-able dict whose ``"status"`` is one of ok / syntax_error /
compile_error / runtime_error / memory_limit (the server decides timeout and crashed itself),
optionally with ``"error"`` and ``"traceback"`` texts.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import select
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from evoforge.archive import Status
from evoforge.evaluators.sandbox._caps import held_capabilities, warm_up
from evoforge.evaluators.sandbox._cgroup import CandidateCgroup, candidate_cgroup
from evoforge.evaluators.sandbox._child import Containment, _child, _rlimits
from evoforge.evaluators.sandbox._fs import (
    DEVICES,
    namespace_support,
    plan_filesystem,
    with_namespaces,
)
from evoforge.evaluators.sandbox._host import children, is_subreaper, remove_workdir
from evoforge.evaluators.sandbox._pidns import PidNamespace, live_first_processes
from evoforge.evaluators.sandbox._protocol import write_all
from evoforge.evaluators.sandbox._seccomp import filter_program

Job = Callable[[bytes], tuple[dict[str, Any], bytes]]

CHILD_STATUSES = frozenset(
    {
        Status.OK,
        Status.SYNTAX_ERROR,
        Status.COMPILE_ERROR,
        Status.RUNTIME_ERROR,
        Status.MEMORY_LIMIT,
    }
)
_REAP_GRACE_S = 5.0  # after SIGKILL, how long to wait for the child to be reapable
_SWEEP_LIMIT_S = 10.0  # how long to keep killing stragglers before giving up


class SandboxError(RuntimeError):
    """The sandbox itself failed (a worker would not start or restart), not the candidate."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one run. Sizes in MiB; ``None`` means no limit of that kind."""

    timeout_s: float
    memory_mb: int | None = 2048
    file_size_mb: int = 64
    max_procs: int = 512
    max_files: int = 1024
    result_mb: int = 16
    tail_chars: int = 4000

    @property
    def cpu_s(self) -> int:
        """The CPU-time soft limit: SIGXCPU at this many seconds, SIGKILL one second later."""
        return math.ceil(self.timeout_s) + 1


@dataclass(frozen=True)
class Isolation:
    """Who the child runs as and what it can reach, beyond what every run gets.

    Attributes:
        user: ``(uid, gid)`` to switch to (needs root; see
            :func:`~evoforge.evaluators.sandbox._host.resolve_user`), or ``None`` to stay the
            server's own user.
        new_network: unshare a network namespace in each child. It costs about 1 ms per run
            here, so servers normally unshare once for all their children instead
            (:func:`~evoforge.evaluators.sandbox._host.enter_network_namespace` at start-up).
        env: extra environment variables for the child.
        filesystem: run the child in a private mount namespace where only its workdir (and
            a private ``/dev/shm``) can be written (see :mod:`evoforge.evaluators.sandbox._fs`).
        hidden_paths: files and folders the child must not read (e.g. the problem's folder):
            each is covered by an empty read-only mount. Needs ``filesystem``.
        hide_secrets: also hide the server user's credential files
            (:data:`~evoforge.evaluators.sandbox._fs.SECRET_PATHS`, those that exist).
        devices: glob patterns of the device nodes the child may open
            (:data:`~evoforge.evaluators.sandbox._fs.DEVICES` by default: the usual character
            devices and accelerators).
        shm_mb: size of the child's private ``/dev/shm``.
        namespaces: run children in a PID namespace of the server's candidates (with their
            own read-only ``/proc``; emptied after each candidate) and give each its own IPC
            namespace (System V objects and POSIX queues die with it), where the host allows
            (needs ``filesystem``; a PID namespace needs root).
        unix_sockets: allow UNIX-domain sockets; by default a seccomp filter refuses them, so
            no socket file outside the workdir (a host service's) can be reached
            (:mod:`evoforge.evaluators.sandbox._seccomp`).
        cgroup: limit and account the memory of the child's whole process tree in a cgroup,
            where the host allows (:mod:`evoforge.evaluators.sandbox._cgroup`).
        reach: folders the child's user may not traverse and what to bind back in them so it
            can import (``FilesystemPlan.reach``; :func:`candidate_user` computes it).
    """

    user: tuple[int, int] | None = None
    new_network: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    filesystem: bool = True
    hidden_paths: tuple[str, ...] = ()
    hide_secrets: bool = True
    devices: tuple[str, ...] = DEVICES
    shm_mb: int = 64
    namespaces: bool = True
    unix_sockets: bool = False
    cgroup: bool = True
    reach: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass
class SandboxRun:
    """What happened in one run. ``status`` is OK when the job returned a result."""

    status: Status
    error: str = ""
    header: dict[str, Any] = field(default_factory=dict)
    payload: bytes = b""
    stdout_tail: str = ""
    stderr_tail: str = ""
    eval_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_mb: float = 0.0
    stragglers: int = 0

    @property
    def artifacts(self) -> dict[str, str]:
        """Short texts for the archive and the next prompt; empty ones are left out."""
        texts = {
            "error": self.error,
            "traceback": self.header.get("traceback"),
            "stdout_tail": self.stdout_tail,
            "stderr_tail": self.stderr_tail,
        }
        return {k: v for k, v in texts.items() if isinstance(v, str) and v}

    @property
    def timings(self) -> dict[str, float]:
        return {"eval_s": self.eval_s, "cpu_s": self.cpu_s, "max_rss_mb": self.max_rss_mb}


class Sandbox:
    """Runs ``job`` once per request, each time in a fresh contained child.

    Args:
        job: called in the child with the request bytes (see the module docstring).
        isolation: user switch, per-run network namespace, extra environment.
        workdir: the directory each child starts in; the caller empties it between runs
            (:class:`~evoforge.evaluators.sandbox._host.Workdir`) before calling :meth:`prepare`.
        keep_pids: returns this server's own long-lived children (helpers), which the sweep
            that kills whatever a candidate left behind must spare.
        on_start: called with the child's pid (= its process group) when a run starts, e.g.
            to record it where a supervisor can find it if this server dies.
        channel: a connected socket's descriptor that each child finds as
            :data:`~evoforge.evaluators.sandbox._child.CHANNEL_FD` (the seccomp filter keeps it
            from creating UNIX sockets of its own). The caller closes its copy once the child
            is forked (:meth:`prepare`), so the child's exit reads as the channel's end.
    """

    def __init__(
        self,
        job: Job,
        isolation: Isolation = Isolation(),
        *,
        workdir: str,
        keep_pids: Callable[[], Collection[int]] = tuple,
        on_start: Callable[[int], None] | None = None,
        channel: int | None = None,
    ) -> None:
        self._job, self._isolation = job, isolation
        self._channel = -1 if channel is None else channel
        self._keep_pids, self._on_start = keep_pids, on_start
        self._env = dict(isolation.env)
        if os.environ.get("HOME") != workdir or os.environ.get("TMPDIR") != workdir:
            self._env.update(HOME=workdir, TMPDIR=workdir)
        self._ready: _Child | None = None
        self._rlimit_lines: dict[Limits, bytes] = {}
        plan = plan_filesystem(
            workdir,
            tuple(isolation.hidden_paths),
            enabled=isolation.filesystem,
            hide_secrets=isolation.hide_secrets,
            devices=tuple(isolation.devices),
            shm_mb=isolation.shm_mb,
            reach=isolation.reach,
        )
        if isolation.reach and not plan.mode:
            raise SandboxError(
                f"candidates run as uid {isolation.user[0] if isolation.user else '?'}, which "
                "needs bind mounts to reach the Python installation, but the filesystem "
                f"isolation is off ({plan.why_off})"
            )
        why_no_pid, why_no_ipc = _namespaces_here(isolation, plan.mode)
        plan = with_namespaces(plan, ipc=not why_no_ipc, proc=not why_no_pid)
        self._pid_ns = None if why_no_pid else PidNamespace()
        seccomp, why_no_seccomp = (
            (None, "allowed (the problem asked)") if isolation.unix_sockets else filter_program()
        )
        self._containment = Containment(workdir, plan, seccomp)
        self._cgroup = (
            candidate_cgroup(f"{os.getpid()}-{id(self):x}")
            if isolation.cgroup
            else CandidateCgroup(0, "off: not asked")
        )
        warm_up()
        held = held_capabilities()
        if held:
            capabilities = f"all dropped (the server holds {held})"
        elif plan.mode == "user namespace":
            capabilities = "all dropped (those of its user namespace)"
        else:
            capabilities = "none held"
        self.protections: dict[str, str] = {
            **plan.describe(),
            "capabilities": capabilities,
            "pid namespace": (
                f"off: {why_no_pid}"
                if why_no_pid
                else "candidates' own, with a read-only /proc of their own (only their own "
                "processes are visible), emptied after each candidate"
            ),
            "ipc namespace": (
                f"off: {why_no_ipc}"
                if why_no_ipc
                else "one per candidate (System V IPC and POSIX queues die with it)"
            ),
            "unix sockets": (
                "refused (seccomp: socket(AF_UNIX) fails; stream socketpairs work)"
                if seccomp is not None
                else f"reachable: {why_no_seccomp}"
            ),
            "memory": (
                self._cgroup.note
                if self._cgroup.version
                else f"per process only (RLIMIT_AS); whole tree {self._cgroup.note}"
            ),
        }
        """Which protections the children get, and why any is off (for ``sandbox_info``)."""

    def prepare(self) -> None:
        """Fork the next child now; it waits, set up, until :meth:`run` hands it a request."""
        if self._ready is None:
            child = self._fork()
            self._ready = child if isinstance(child, _Child) else None

    def run(self, request: bytes, limits: Limits) -> SandboxRun:
        """Run one request under ``limits``. Never raises for anything the child does."""
        line = self._rlimit_lines.get(limits)
        if line is None:
            line = json.dumps(_rlimits(limits, self._isolation)).encode() + b"\n"
            self._rlimit_lines[limits] = line
        message = line + request
        for _ in range(2):  # a prepared child killed from outside while waiting: fork afresh
            child = self._ready or self._fork()
            self._ready = None
            if isinstance(child, SandboxRun):
                return child
            failed = self._cgroup.arm(limits.memory_mb, limits.max_procs)
            if failed:
                child.discard()
                return SandboxRun(Status.CRASHED, error=f"sandbox set-up failed: {failed}")
            start = time.perf_counter()
            if child.go(message):
                break
            child.discard()
        else:
            return SandboxRun(Status.CRASHED, error="the sandbox child died before the run")
        if self._on_start is not None:
            self._on_start(child.pid)
        try:
            keep = self._keep_pids()
            return _supervise(child, start, limits, keep, self._cgroup, self._pid_ns)
        finally:
            child.close()

    def close(self) -> None:
        """Dismiss the prepared child, if any, and remove the candidates' cgroup."""
        if self._ready is not None:
            self._ready.discard()
            self._ready = None
        self._cgroup.close()
        if self._pid_ns is not None:
            self._pid_ns.close()
            self._pid_ns = None

    def _fork(self) -> _Child | SandboxRun:
        go_r, go_w = os.pipe()
        result_r, result_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # or the child would inherit and repeat them
            with contextlib.suppress(Exception):
                stream.flush()
        use_pidfd = _pidfds_work()
        wakeup_fd = -1 if use_pidfd else _sigchld_wakeup_fd()  # armed before the fork
        server_pid = os.getpid()
        try:
            pid = os.fork() if self._pid_ns is None else self._pid_ns.fork()
        except OSError as exc:
            for fd in (go_r, go_w, result_r, result_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            return SandboxRun(Status.CRASHED, error=f"could not fork the candidate process: {exc}")
        if pid == 0:
            _child(
                self._job,
                self._isolation,
                self._containment,
                self._env,
                server_pid,
                use_pidfd,
                go_r,
                result_w,
                out_w,
                err_w,
                self._channel,
            )
        for fd in (go_r, result_w, out_w, err_w):
            os.close(fd)
        for fd in (result_r, out_r, err_r):  # read after poll() says so, drained at the end
            os.set_blocking(fd, False)
        exit_fd = os.pidfd_open(pid) if use_pidfd else wakeup_fd
        child = _Child(pid, exit_fd, use_pidfd, result_r, out_r, err_r, go_w)
        failed = self._cgroup.admit(pid)
        if failed:
            child.discard()
            return SandboxRun(Status.CRASHED, error=f"sandbox set-up failed: {failed}")
        return child


def run_sandboxed(
    job: Callable[[], tuple[dict[str, Any], bytes]],
    limits: Limits,
    isolation: Isolation = Isolation(),
    *,
    keep_pids: Collection[int] = (),
) -> SandboxRun:
    """Run ``job()`` once in a contained child with its own temporary directory.

    The one-shot form of :class:`Sandbox` (no pre-forking), for callers that run rarely.
    """
    workdir = tempfile.mkdtemp(prefix="evoforge-")
    sandbox = None
    try:
        if isolation.user is not None:
            os.chown(workdir, *isolation.user)
        sandbox = Sandbox(
            lambda _request: job(), isolation, workdir=workdir, keep_pids=lambda: keep_pids
        )
        return sandbox.run(b"", limits)
    finally:
        if sandbox is not None:
            sandbox.close()
        remove_workdir(workdir)


@dataclass
class _Child:
    """A forked child waiting for its request, and the server's ends of its pipes."""

    pid: int
    exit_fd: int  # a pidfd, or the shared SIGCHLD wakeup descriptor
    is_pidfd: bool
    result_r: int
    out_r: int
    err_r: int
    go_w: int

    def go(self, message: bytes) -> bool:
        """Hand over the request; False if the child is already gone."""
        try:
            write_all(self.go_w, message)
            return True
        except OSError:
            return False
        finally:
            os.close(self.go_w)
            self.go_w = -1

    def discard(self) -> None:
        """Stop an unused (or dead) child and release everything."""
        if self.go_w >= 0:
            os.close(self.go_w)
            self.go_w = -1
        _kill_group(self.pid)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        self.close()

    def close(self) -> None:
        for fd in (self.result_r, self.out_r, self.err_r):
            os.close(fd)
        if self.is_pidfd:
            os.close(self.exit_fd)


@functools.cache
def _pidfds_work() -> bool:
    """Whether this kernel has pidfds (Linux >= 5.3); else SIGCHLD notifications are used."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


def _supervise(
    child: _Child,
    start: float,
    limits: Limits,
    keep_pids: Collection[int],
    cgroup: CandidateCgroup,
    pid_ns: PidNamespace | None = None,
) -> SandboxRun:
    pid, exit_fd, result_r = child.pid, child.exit_fd, child.result_r
    result = _Capped(limits.result_mb * 2**20)
    out, err = _Tail(limits.tail_chars), _Tail(limits.tail_chars)
    sinks: dict[int, _Capped | _Tail] = {result_r: result, child.out_r: out, child.err_r: err}
    poller = select.poll()
    for fd in (exit_fd, *sinks):
        poller.register(fd, select.POLLIN)
    deadline, killed_at, reason = start + limits.timeout_s, None, ""
    exited = False
    while not exited:
        now = time.perf_counter()
        if killed_at is None and now >= deadline:
            _kill_group(pid)
            killed_at, reason = now, reason or "timeout"
        until = deadline if killed_at is None else killed_at + _REAP_GRACE_S
        if now >= until:
            break  # killed, yet not reapable (uninterruptible sleep): give up waiting
        for fd, _ in poller.poll(math.ceil((until - now) * 1000)):
            if fd == exit_fd:
                exited = True if child.is_pidfd else _has_exited(pid, fd)
            elif not _read_into(fd, sinks[fd]):
                poller.unregister(fd)
            elif fd == result_r and result.overflow and killed_at is None:
                _kill_group(pid)
                killed_at, reason = time.perf_counter(), "too_large"
                poller.unregister(fd)
    eval_s = time.perf_counter() - start
    run = SandboxRun(Status.CRASHED, eval_s=eval_s)
    if exited:
        _kill_group(pid)  # leftovers in the group; the leader is a zombie, so its pid is not reused
        _, wait_status, usage = os.wait4(pid, 0)
        run.cpu_s = usage.ru_utime + usage.ru_stime
        run.max_rss_mb = usage.ru_maxrss / (1024 if sys.platform != "darwin" else 2**20)
        run.stragglers = _sweep(pid, keep_pids, pid_ns)
        tree_peak_mb, oom_killed = cgroup.collect()
        run.max_rss_mb = max(run.max_rss_mb, tree_peak_mb)  # the whole tree, where accounted
        if oom_killed:
            reason = reason or "memory"
    else:
        cgroup.collect()
    for fd, sink in sinks.items():
        if fd != result_r or reason != "too_large":
            _drain(fd, sink)
    run.stdout_tail, run.stderr_tail = out.text("stdout"), err.text("stderr")
    if not exited:
        run.status = Status.TIMEOUT if reason == "timeout" else Status.CRASHED
        run.error = f"was killed but could not be reaped within {_REAP_GRACE_S:g} s"
        return run
    _classify(run, wait_status, reason, bytes(result.data), limits)
    return run


def _classify(run: SandboxRun, wait_status: int, reason: str, data: bytes, limits: Limits) -> None:
    """Fill status and error from how the child ended and what it wrote."""
    if reason == "memory":
        run.status, run.payload = Status.MEMORY_LIMIT, b""
        run.error = (
            f"its processes together used more than the memory limit of {limits.memory_mb} MiB "
            "(cgroup), and the kernel killed them"
        )
    elif reason == "too_large":
        run.status = Status.RUNTIME_ERROR
        run.error = f"output too large: more than {limits.result_mb} MiB of result data"
    elif reason == "timeout":
        run.status = Status.TIMEOUT
        run.error = f"exceeded the wall-clock limit of {limits.timeout_s:g} s and was killed"
    elif os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and run.cpu_s >= limits.cpu_s):
            run.status = Status.TIMEOUT
            run.error = f"exceeded the CPU-time limit of {limits.cpu_s} s"
        else:
            run.status = Status.CRASHED
            run.error = f"killed by signal {_signal_name(sig)}"
            if sig == signal.SIGKILL:
                run.error += " (not by the sandbox; possibly the out-of-memory killer)"
    elif not data:
        code = os.waitstatus_to_exitcode(wait_status)
        run.status = Status.CRASHED
        run.error = f"exited with code {code} before returning a result"
    else:
        header_line, _, run.payload = data.partition(b"\n")
        try:
            header = json.loads(header_line)
            status = Status(header["status"])
            if status not in CHILD_STATUSES or not isinstance(header, dict):
                raise ValueError(status)
        except (ValueError, KeyError, TypeError):
            run.status, run.payload = Status.SANDBOX_VIOLATION, b""
            run.error = "the result channel held data the sandbox did not write (tampering)"
            return
        run.status, run.header = status, header
        run.error = header.get("error") if isinstance(header.get("error"), str) else ""


def _kill_group(pgid: int) -> bool:
    """SIGKILL a process group; False when it has no members left."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    except PermissionError:  # macOS reports a group of zombies this way
        return True
    return True


def _sweep(pgid: int, keep_pids: Collection[int], pid_ns: PidNamespace | None = None) -> int:
    """Kill and reap everything the candidate left: its group, then orphans re-parented here,
    then whatever is left in its PID namespace (where orphans go when there is one).

    Terminates because a group member's orphans are re-parented to this (subreaper) process
    before that member can be reaped, so "group empty and no children" means all are gone.
    The common case (nothing left) costs one ``killpg`` and one read of ``/proc``. In a
    process that is not a subreaper (a controller calling :func:`run_sandboxed` directly) only
    the group is killed: its other children belong to someone else.
    """
    killed, give_up = 0, time.perf_counter() + _SWEEP_LIMIT_S
    adopts_orphans = is_subreaper()  # elsewhere other children are not ours to kill
    while True:
        group_alive = _kill_group(pgid)
        strays = children() - {*keep_pids, *live_first_processes} if adopts_orphans else set()
        for stray in strays:
            with contextlib.suppress(ProcessLookupError):
                os.kill(stray, signal.SIGKILL)
        for stray in strays:
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(stray, os.WNOHANG)[0]:
                    killed += 1
        if not group_alive and not strays:
            break
        if time.perf_counter() > give_up:
            print(f"evoforge sandbox: gave up killing leftovers of {pgid}", file=sys.stderr)
            break
        time.sleep(0.0005)  # only when something was left behind: let SIGKILL land
    if pid_ns is not None:
        try:
            killed += pid_ns.sweep()
        except OSError as exc:
            print(f"evoforge sandbox: leftovers of {pgid}: {exc}", file=sys.stderr)
    return killed


def _read_into(fd: int, sink: _Capped | _Tail) -> bool:
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        return True
    except OSError:
        return False
    if chunk:
        sink.add(chunk)
    return bool(chunk)


def _drain(fd: int, sink: _Capped | _Tail) -> None:
    """Read what is left in a (non-blocking) pipe; a writer may survive if unkillable."""
    for _ in range(4096):
        try:
            chunk = os.read(fd, 65536)
        except (BlockingIOError, OSError):
            return
        if not chunk:
            return
        sink.add(chunk)


class _Capped:
    """Keeps up to ``cap`` bytes and notes whether more arrived."""

    def __init__(self, cap: int) -> None:
        self.cap, self.data, self.overflow = cap, bytearray(), False

    def add(self, chunk: bytes) -> None:
        if len(self.data) + len(chunk) > self.cap:
            self.overflow = True
        else:
            self.data += chunk


class _Tail:
    """Keeps the last characters of a stream and counts the bytes seen."""

    def __init__(self, chars: int) -> None:
        self.keep, self.buf, self.seen = 4 * chars, bytearray(), 0  # UTF-8: <= 4 bytes a char
        self.chars = chars

    def add(self, chunk: bytes) -> None:
        self.seen += len(chunk)
        self.buf += chunk
        if len(self.buf) > 2 * self.keep:
            del self.buf[: -self.keep]

    def text(self, name: str) -> str:
        text = bytes(self.buf[-self.keep :]).decode("utf-8", "replace")[-self.chars :]
        shown = len(text.encode("utf-8", "replace"))
        if self.seen > shown:
            text = f"[{name}: {self.seen} bytes; showing the last {len(text)} characters]\n{text}"
        return text


# ---------------------------------------------------------------------------------------------
# Small platform helpers

_wakeup: tuple[int, int] | None = None


def _namespaces_here(isolation: Isolation, mode: str) -> tuple[str, str]:
    """``(why no PID namespace, why no IPC namespace)`` for children of this isolation."""
    if not isolation.namespaces:
        return "not asked", "not asked"
    if not mode:
        return "needs the filesystem isolation (a mount namespace)", (
            "needs the filesystem isolation (a mount namespace)"
        )
    why_pid, why_ipc = namespace_support()
    if mode == "user namespace" and not why_pid:
        why_pid = "needs a server with CAP_SYS_ADMIN (it runs as another user)"
    return why_pid, why_ipc


def _sigchld_wakeup_fd() -> int:
    """A descriptor that becomes readable on SIGCHLD (where pidfds are unavailable)."""
    global _wakeup
    if _wakeup is None:
        r, w = os.pipe()
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        _wakeup = (r, w)
    return _wakeup[0]


def _has_exited(pid: int, wakeup_fd: int) -> bool:
    with contextlib.suppress(BlockingIOError):
        while os.read(wakeup_fd, 4096):
            pass
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return str(sig)
