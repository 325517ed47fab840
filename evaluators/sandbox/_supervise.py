"""Supervising one sandboxed child: deadline, output, result, and what it left behind.

The server waits on the child's pidfd (or, on kernels without pidfds, a SIGCHLD wakeup
descriptor) and its pipes with one ``poll``, no polling sleeps: the wall-clock deadline kills
the whole process group, output is kept as capped tails, the result is capped in size, and
after the child ends everything it left (its group, orphans re-parented to the server, what is
left in the candidates' PID namespace) is killed and reaped before the next child is forked.
How the child ended becomes a :class:`~evoforge.evaluators.sandbox._types.SandboxRun`;
nothing from the child is ever unpickled.
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
import time
from collections.abc import Collection
from dataclasses import dataclass

from evoforge.archive import Status
from evoforge.evaluators.sandbox._cgroup import CandidateCgroup
from evoforge.evaluators.sandbox._host import children, is_subreaper
from evoforge.evaluators.sandbox._pidns import PidNamespace, live_first_processes
from evoforge.evaluators.sandbox._protocol import write_all
from evoforge.evaluators.sandbox._types import Limits, SandboxRun

CHILD_STATUSES = frozenset(
    {
        Status.OK,
        Status.SYNTAX_ERROR,
        Status.COMPILE_ERROR,
        Status.RUNTIME_ERROR,
        Status.MEMORY_LIMIT,
        Status.DISK_LIMIT,
    }
)
"""The statuses a child may report itself; any other is tampering."""
_REAP_GRACE_S = 5.0  # after SIGKILL, how long to wait for the child to be reapable
_SWEEP_LIMIT_S = 10.0  # how long to keep killing stragglers before giving up

_wakeup: tuple[int, int] | None = None


@dataclass
class Child:
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
def pidfds_work() -> bool:
    """Whether this kernel has pidfds (Linux >= 5.3); else SIGCHLD notifications are used."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


def supervise(
    child: Child,
    start: float,
    limits: Limits,
    keep_pids: Collection[int],
    cgroup: CandidateCgroup,
    pid_ns: PidNamespace | None = None,
) -> SandboxRun:
    """Wait for ``child`` (started at ``start``, a ``perf_counter`` value) under ``limits``,
    sweep what it left (sparing ``keep_pids``), and say how it ended. Never raises for
    anything the child does."""
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
    if oom_killed and reason != "too_large":
        # The kernel killed one of its processes for the tree's memory: that is how it ended,
        # even when the rest then sat blocked until the deadline (cgroup v1 kills only the
        # largest process; a parent waiting on it never returns).
        reason = "memory"
    for fd, sink in sinks.items():
        if fd != result_r or reason != "too_large":
            _drain(fd, sink)
    run.stdout_tail, run.stderr_tail = out.text("stdout"), err.text("stderr")
    if not exited:
        run.status = {"timeout": Status.TIMEOUT, "memory": Status.MEMORY_LIMIT}.get(
            reason, Status.CRASHED
        )
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
            f"(cgroup; peak {run.max_rss_mb:.0f} MiB), and the kernel killed them"
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
        error = header.get("error")
        run.error = error if isinstance(error, str) else ""


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
    """Kill and reap everything the candidate left: everything in its PID namespace when
    there is one (its first process kills and reaps, in about a millisecond), then its group
    and the orphans re-parented here.

    Terminates because a group member's orphans are re-parented to this (subreaper) process
    before that member can be reaped, so "group empty and no children" means all are gone.
    The common case (nothing left) costs one ``killpg`` and one read of ``/proc``. In a
    process that is not a subreaper (a controller calling :func:`run_sandboxed` directly) only
    the group is killed: its other children belong to someone else.
    """
    killed, give_up = 0, time.perf_counter() + _SWEEP_LIMIT_S
    adopts_orphans = is_subreaper()  # elsewhere other children are not ours to kill
    if pid_ns is not None:
        # First, and enough: everything the candidate started is in the namespace, setsid
        # escapees included, and its orphans are the first process's children, which it reaps
        # only when asked. Left as zombies they would keep the group "alive" (a group of
        # zombies still takes signals) and the loop below would wait in vain.
        killed += _sweep_namespace(pgid, pid_ns)
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
    return killed


def _sweep_namespace(pgid: int, pid_ns: PidNamespace) -> int:
    try:
        return pid_ns.sweep()
    except OSError as exc:
        print(f"evoforge sandbox: leftovers of {pgid}: {exc}", file=sys.stderr)
        return 0


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


def sigchld_wakeup_fd() -> int:
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
