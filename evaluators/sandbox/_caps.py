"""Capabilities of a sandboxed child: all dropped, for good, before its job runs (Linux).

A candidate that runs as root (when the switch to an unprivileged user is not usable) would
otherwise keep every capability: it could remount its read-only filesystem writable, unmount
what hides the problem's files, load kernel modules, or read the memory of the server, whose
protection against a same-user process is only that it is not dumpable. Without capabilities,
uid 0 is an ordinary owner of root's files (and those are on read-only mounts); ptrace and
``/proc/PID/mem``, ``/environ`` and ``/fd`` of processes that hold more capabilities or are not
dumpable are refused; and nothing can be mounted.

None come back: ``PR_SET_NO_NEW_PRIVS`` makes every ``execve`` keep the (empty) permitted set,
whatever the program (setuid, file capabilities, or any program run by uid 0), and the
``SECBIT_NOROOT`` secure bit, locked, takes uid 0's special case away as a second guard. The
bounding set is left as it is: emptying it costs a system call per capability (about 0.3 ms
a child here) and adds nothing to those two.

What it does not change: signals. A process may signal any other of the same uid, so a
candidate that runs as root can still kill other root processes.
"""

from __future__ import annotations

import ctypes
import functools
import os
from typing import Any

from evoforge.evaluators.sandbox._host import PR_SET_NO_NEW_PRIVS, load_libc, prctl

PR_SET_SECUREBITS = 28
SECBIT_NOROOT, SECBIT_NOROOT_LOCKED = 1 << 0, 1 << 1
_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def held_capabilities() -> int:
    """How many capabilities this process has in its effective set (0 where unknown)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"CapEff:"):
                    return int(line.split()[1], 16).bit_count()
    except OSError:
        pass
    return 0


def has_sys_admin() -> bool:
    """Whether this process holds ``CAP_SYS_ADMIN`` (mounts, namespaces; as uid 0 where the
    capabilities cannot be read)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"CapEff:"):
                    return bool(int(line.split()[1], 16) >> 21 & 1)
    except OSError:
        pass
    return os.geteuid() == 0


def drop_capabilities() -> None:
    """Empty the effective, permitted, inheritable (so also ambient) sets; no new privileges.

    Raises:
        OSError: ``capset`` failed (the process would keep capabilities).
    """
    libc = load_libc()
    if libc is None:
        return
    # Needs CAP_SETPCAP; a process without it has no capability to lose on exec either.
    prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED)
    header, data = _capset_arguments()
    if libc.capset(header, data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")
    if not prctl(PR_SET_NO_NEW_PRIVS, 1):
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")


def warm_up() -> None:
    """Resolve the libc functions :func:`drop_capabilities` calls and build its arguments, in
    the server: a child would otherwise do it anew each time (what a child caches dies with
    it), at about 0.1 ms."""
    libc = load_libc()
    if libc is not None:
        for name in ("prctl", "capset"):
            getattr(libc, name)
        _capset_arguments()


@functools.cache
def _capset_arguments() -> tuple[Any, Any]:
    """``capset`` arguments for "no capability in any set" (version 3: two 32-bit words)."""
    return ctypes.pointer(_CapHeader(_CAPABILITY_VERSION_3, 0)), (_CapData * 2)()
