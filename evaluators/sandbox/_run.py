"""Running jobs in contained children: :class:`Sandbox` forks them, ahead of their requests.

Every evaluator runs its candidates through :class:`Sandbox` (or the one-shot
:func:`run_sandboxed`), so containment is written once; what each child gets is listed in
:mod:`evoforge.evaluators.sandbox._report`, and :attr:`Sandbox.protections` says which
protections are on here, and why any is off.

Children are forked *before* their request arrives (:meth:`Sandbox.prepare`, called by a
server after it has answered): the fork and the set-up that does not depend on the request
(about 1 ms with numpy loaded on this VM, plus about 0.5 ms for the mount namespace and the
capabilities) then happen off the latency path, and a request only wakes a waiting child
(:mod:`~evoforge.evaluators.sandbox._child`), which the server then supervises
(:mod:`~evoforge.evaluators.sandbox._supervise`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Collection
from typing import Any

from evoforge.archive import Status
from evoforge.evaluators.sandbox._caps import warm_up
from evoforge.evaluators.sandbox._cgroup import CandidateCgroup, candidate_cgroup
from evoforge.evaluators.sandbox._child import Containment, rlimits, run_child
from evoforge.evaluators.sandbox._host import python_paths, remove_workdir
from evoforge.evaluators.sandbox._mount_plan import plan_filesystem, with_namespaces
from evoforge.evaluators.sandbox._ns_probe import namespaces_here
from evoforge.evaluators.sandbox._pidns import PidNamespace
from evoforge.evaluators.sandbox._report import protections
from evoforge.evaluators.sandbox._seccomp import filter_program
from evoforge.evaluators.sandbox._supervise import (
    Child,
    pidfds_work,
    sigchld_wakeup_fd,
    supervise,
)
from evoforge.evaluators.sandbox._types import Isolation, Job, Limits, SandboxError, SandboxRun

_DEFAULT_ISOLATION = Isolation()  # frozen: one shared default is safe


class Sandbox:
    """Runs ``job`` once per request, each time in a fresh contained child.

    Args:
        job: called in the child with the request bytes (see :data:`Job`).
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
        isolation: Isolation = _DEFAULT_ISOLATION,
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
        self._ready: Child | None = None
        self._rlimit_lines: dict[Limits, bytes] = {}
        reached = tuple(path for _, paths in isolation.reach for path in paths)
        plan = plan_filesystem(
            workdir,
            tuple(isolation.hidden_paths),
            enabled=isolation.filesystem,
            hide_secrets=isolation.hide_secrets,
            devices=tuple(isolation.devices),
            shm_mb=isolation.shm_mb,
            disk_mb=isolation.disk_mb,
            workdir_base=isolation.workdir_base,
            owner=isolation.user,
            keep=(*_imported_from(), *isolation.keep, *reached) if isolation.filesystem else (),
            gpu=isolation.gpu,
        )
        if isolation.reach and not plan.mode:
            raise SandboxError(
                f"candidates run as uid {isolation.user[0] if isolation.user else '?'}, which "
                "needs bind mounts to reach the Python installation, but the filesystem "
                f"isolation is off ({plan.why_off})"
            )
        why_no_pid, why_no_ipc = namespaces_here(isolation.namespaces, plan.mode)
        plan = with_namespaces(plan, ipc=not why_no_ipc, proc=not why_no_pid)
        self._pid_ns = None if why_no_pid else PidNamespace()
        seccomp, why_no_seccomp = filter_program(isolation.unix_sockets, plan.gpu)
        self._containment = Containment(workdir, plan, seccomp)
        self._cgroup = (
            candidate_cgroup(f"{os.getpid()}-{id(self):x}")
            if isolation.cgroup
            else CandidateCgroup(0, "off: not asked")
        )
        warm_up()
        self.protections: dict[str, str] = protections(
            plan,
            why_no_pid=why_no_pid,
            why_no_ipc=why_no_ipc,
            seccomp=seccomp is not None,
            why_no_seccomp=why_no_seccomp,
            cgroup=self._cgroup,
            unix_sockets=isolation.unix_sockets or plan.gpu,
        )
        """Which protections the children get, and why any is off (for ``sandbox_info``)."""

    def prepare(self) -> None:
        """Fork the next child now; it waits, set up, until :meth:`run` hands it a request."""
        if self._ready is None:
            child = self._fork()
            self._ready = child if isinstance(child, Child) else None

    def run(self, request: bytes, limits: Limits) -> SandboxRun:
        """Run one request under ``limits``. Never raises for anything the child does."""
        line = self._rlimit_lines.get(limits)
        if line is None:
            line = (
                json.dumps(rlimits(limits, self._isolation, self._cgroup.counts_processes)).encode()
                + b"\n"
            )
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
            if self._on_start is not None:
                # before the child starts: it may kill this server at once, and whoever
                # cleans up after the server must know whose group to kill
                self._on_start(child.pid)
            start = time.perf_counter()
            if child.go(message):
                break
            child.discard()
        else:
            return SandboxRun(Status.CRASHED, error="the sandbox child died before the run")
        try:
            keep = self._keep_pids()
            return supervise(child, start, limits, keep, self._cgroup, self._pid_ns)
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

    def _fork(self) -> Child | SandboxRun:
        go_r, go_w = os.pipe()
        result_r, result_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # or the child would inherit and repeat them
            with contextlib.suppress(Exception):
                stream.flush()
        use_pidfd = pidfds_work()
        wakeup_fd = -1 if use_pidfd else sigchld_wakeup_fd()  # armed before the fork
        server_pid = os.getpid()
        try:
            pid = os.fork() if self._pid_ns is None else self._pid_ns.fork()
        except OSError as exc:
            for fd in (go_r, go_w, result_r, result_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            return SandboxRun(Status.CRASHED, error=f"could not fork the candidate process: {exc}")
        if pid == 0:
            run_child(
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
        child = Child(pid, exit_fd, use_pidfd, result_r, out_r, err_r, go_w)
        failed = self._cgroup.admit(pid)
        if failed:
            child.discard()
            return SandboxRun(Status.CRASHED, error=f"sandbox set-up failed: {failed}")
        return child


def run_sandboxed(
    job: Callable[[], tuple[dict[str, Any], bytes]],
    limits: Limits,
    isolation: Isolation = _DEFAULT_ISOLATION,
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


def _imported_from() -> tuple[str, ...]:
    """What this process imports from (the Python installation, site-packages, the project's
    packages, ``sys.path``) and the folders of the shared libraries it has loaded (a
    toolkit's, say under ``/opt``): what a child's minimal root must hold besides the system."""
    essential, other = python_paths()
    libraries = set()
    with contextlib.suppress(OSError), open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split(maxsplit=5)[-1].strip()
            if path.startswith("/") and ".so" in path:
                libraries.add(os.path.dirname(path))
    return (*essential, *other, *sorted(libraries))
