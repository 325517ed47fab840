"""A PID namespace for a sandbox server's candidates, emptied after each of them.

Each candidate is forked straight into the namespace (``setns`` on the server's
``pid_for_children``, ``fork``, ``setns`` back), so in its fresh ``/proc`` it sees only itself,
what it started, and the namespace's first process; it can neither read the command lines of
host processes nor signal them. After each candidate the first process kills everything else in
the namespace (``kill(-1, SIGKILL)`` reaches every process of a PID namespace but its first)
and reaps until nothing is left, before the server forks the next one: no process of one
candidate ever meets the next, ``setsid`` escapees included, since a candidate's orphans are
re-parented to that first process, not to the server.

Why one namespace per server and not one per candidate: the first process of a PID namespace
ignores every signal from inside it that it has no handler for, so a candidate cannot be that
process (``os.abort()`` would do nothing). A namespace per candidate therefore needed a first
process that was a fork of the server plus a second fork for the job: one more copy and one
more teardown of the server's page tables per candidate, about 10 ms of CPU with numpy
loaded (``bench/sandbox_overhead.py --compare-containment``). Here the first process is a
small interpreter started once with ``posix_spawn`` (no copy of the server's memory), and a
candidate costs what it costs without the namespace plus one pipe round trip.

The first process runs as the server's user with its capabilities, in the host's mount
namespace, with an empty environment. A candidate cannot signal it (the kernel drops signals
sent to a namespace's first process from inside it, and SIGINT, the one Python handles, is
blocked from its start), nor trace or read it (a candidate holds no capabilities, so
``ptrace`` access to a process that holds some is refused whatever the uid). If it dies anyway, the
kernel kills the whole namespace, the server sees it, and the next candidate gets a fresh one.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
import time

from evoforge.evaluators.sandbox._host import load_libc

CLONE_NEWPID = 0x20000000

# The first process: reads a byte per sweep, answers with how many processes it reaped. It
# exits when the server closes the pipe (the server is gone), which ends the namespace.
_FIRST_PROCESS = """\
# evoforge sandbox: the first process of the candidates' PID namespace
import os, signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
def reap():
    n = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return n
        if not pid:
            return n
        n += 1
while True:
    try:
        if not os.read(0, 1):
            break
    except InterruptedError:
        continue
    reaped, give_up = reap(), time.monotonic() + {limit}
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            break
        if time.monotonic() > give_up:
            reaped = -1
            break
        time.sleep(0.0002)
        reaped += reap()
    os.write(1, b"%d\\n" % reaped)
"""

_ENDED = os.WEXITED | os.WNOHANG | os.WNOWAIT  # a look at whether it ended, reaping nothing
_END_WAIT_S = 5.0
_SWEEP_LIMIT_S = 10.0  # how long the first process keeps killing before it says it gave up

live_first_processes: set[int] = set()
"""Pids of every live namespace's first process in this server: children of the server that
a sweep of a candidate's leftovers must spare (see ``_supervise._sweep``)."""


class PidNamespace:
    """The namespace and its first process; made on first use, and again if it died."""

    def __init__(self) -> None:
        self._own = os.open("/proc/self/ns/pid", os.O_RDONLY)
        self._ns = self._ask = self._answer = -1
        self._pid = 0

    def fork(self) -> int:
        """``os.fork()`` with the child in the namespace; the caller stays in its own.

        A namespace whose first process was killed from outside is still being torn down for
        a moment after the check that it lives (the kernel waits until its other processes
        are reaped): fork then fails, and it is ended and made anew once.
        """
        try:
            return self._fork_inside()
        except OSError:
            self._end()
            return self._fork_inside()

    def _fork_inside(self) -> int:
        self._ensure()
        server = os.getpid()
        if load_libc().setns(self._ns, CLONE_NEWPID) != 0:
            raise OSError(ctypes.get_errno(), "setns into the candidates' PID namespace failed")
        try:
            return os.fork()
        finally:
            if os.getpid() == server:  # the server's later forks (its scorer) stay its own
                self._return()

    def sweep(self) -> int:
        """Kill and reap every process left in the namespace; how many there were.

        Raises:
            OSError: the first process did not answer (it is then killed, which ends the
                namespace and everything in it, and the next fork makes a new one).
        """
        if self._pid == 0:
            return 0
        try:
            os.write(self._ask, b"s")
            ready, _, _ = select.select([self._answer], [], [], _SWEEP_LIMIT_S + 5)
            answer = os.read(self._answer, 64) if ready else b""
            reaped = int(answer)
        except (OSError, ValueError):
            reaped = -1
        if reaped < 0:
            self._end()
            raise OSError("the PID namespace's first process did not empty it; it was ended")
        return reaped

    def close(self) -> None:
        """End the namespace (and whatever is in it)."""
        self._end()
        if self._own >= 0:
            os.close(self._own)
            self._own = -1

    def _ensure(self) -> None:
        if self._pid and not os.waitid(os.P_PID, self._pid, _ENDED):
            return  # alive
        self._end()
        ask_r, self._ask = os.pipe()
        self._answer, answer_w = os.pipe()
        try:
            if load_libc().unshare(CLONE_NEWPID) != 0:
                raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWPID) failed")
            try:
                script = _FIRST_PROCESS.replace("{limit}", repr(_SWEEP_LIMIT_S))
                self._pid = os.posix_spawn(
                    sys.executable,
                    [sys.executable, "-S", "-I", "-c", script],
                    {},
                    file_actions=[
                        (os.POSIX_SPAWN_DUP2, ask_r, 0),
                        (os.POSIX_SPAWN_DUP2, answer_w, 1),
                    ],
                    setsid=True,
                    # Blocked from birth: else a root candidate could SIGINT it while the
                    # interpreter starts, before the script ignores SIGINT (Python's handler
                    # would count as one, so the signal would be delivered). Stays blocked.
                    setsigmask=[signal.SIGINT],
                )
                # Only openable once the namespace has its first process.
                self._ns = os.open("/proc/self/ns/pid_for_children", os.O_RDONLY)
            finally:
                self._return()
        finally:
            os.close(ask_r)
            os.close(answer_w)
        live_first_processes.add(self._pid)

    def _return(self) -> None:
        if load_libc().setns(self._own, CLONE_NEWPID) != 0:
            raise OSError(ctypes.get_errno(), "setns back to the server's PID namespace failed")

    def _end(self) -> None:
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)  # not reaped yet, so not reused
            # Its exit waits for the namespace's other processes to be reaped, and one may be
            # an unreaped child of the server: wait a bounded time, then leave it to a sweep.
            give_up = time.monotonic() + _END_WAIT_S
            with contextlib.suppress(ChildProcessError):
                while not os.waitpid(self._pid, os.WNOHANG)[0] and time.monotonic() < give_up:
                    time.sleep(0.001)
            live_first_processes.discard(self._pid)
            self._pid = 0
        for fd in (self._ns, self._ask, self._answer):
            if fd >= 0:
                os.close(fd)
        self._ns = self._ask = self._answer = -1
