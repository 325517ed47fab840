"""A seccomp filter for candidates: no UNIX-domain socket can be created or reached (Linux).

A network namespace takes away the network and abstract UNIX sockets, but not the filesystem's:
``connect()`` to a socket file needs only write permission on it, and a read-only mount does not
stop it, so a candidate could talk to any host service listening on a socket file it can see
(``/tmp/...``, ``/run/...``). The filter makes ``socket(AF_UNIX, ...)`` fail with ``EACCES``, so
no socket that could connect to a path, bind one or send a datagram to one exists in the
candidate. ``socketpair(AF_UNIX, SOCK_STREAM)`` still works (asyncio's self-pipe and
``multiprocessing`` pipes use it): such a pair is connected from birth and cannot be
re-connected. Datagram and seqpacket pairs are refused (a datagram socket can ``sendto`` a path).
``io_uring`` is refused too (``ENOSYS``, so libraries fall back to plain calls), because its
operations create and connect sockets without system calls that a filter sees. System calls of
another architecture (32-bit ones on x86-64) are refused as a whole.

What stops working in candidates: ``multiprocessing`` managers and ``forkserver``, which listen
on a UNIX socket, and ``logging.handlers.SysLogHandler``.

Built once in the server (:func:`filter_program`); a child installs it with one ``prctl`` after
its capabilities are gone (it needs ``PR_SET_NO_NEW_PRIVS``, which that sets).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
from typing import Any

from evoforge.evaluators.sandbox._host import load_libc

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _AND_K, _RET_K = 0x20, 0x15, 0x35, 0x54, 0x06
_AF_UNIX, _SOCK_STREAM, _SOCK_TYPE_MASK = 1, 1, 0xF
_X32_BIT = 0x40000000

# (audit architecture, socket, socketpair) by machine; io_uring's numbers are shared.
_ARCHES = {
    "x86_64": (0xC000003E, 41, 53),
    "aarch64": (0xC00000B7, 198, 199),
}
_IO_URING = (425, 426, 427)  # io_uring_setup, io_uring_enter, io_uring_register


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


@functools.cache
def filter_program() -> tuple[Any, str]:
    """``(prog, "")`` ready for ``prctl``, or ``(None, why not)`` on this machine."""
    if load_libc() is None:
        return None, "needs Linux seccomp"
    machine = platform.machine()
    if machine not in _ARCHES:
        return None, f"no filter for the {machine} architecture"
    arch, socket_nr, socketpair_nr = _ARCHES[machine]

    def deny(code: int) -> tuple[int, int, int, int]:
        return (_RET_K, 0, 0, _RET_ERRNO | code)

    allow = (_RET_K, 0, 0, _RET_ALLOW)
    body: list[tuple[int, int, int, int]] = [
        (_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ_K, 1, 0, arch),
        deny(errno.ENOSYS),  # another architecture's system calls
        (_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
    ]
    if machine == "x86_64":
        body += [(_JGE_K, 0, 1, _X32_BIT), deny(errno.ENOSYS)]  # x32 calls
    tail = [
        (_JEQ_K, 5, 0, socket_nr),  # -> the socket() check
        (_JEQ_K, 8, 0, socketpair_nr),  # -> the socketpair() check
        (_JGE_K, 0, 2, _IO_URING[0]),
        (_JGE_K, 1, 0, _IO_URING[-1] + 1),
        deny(errno.ENOSYS),
        allow,
        # socket(): its domain, the low word of args[0]
        (_LD_W_ABS, 0, 0, 16),
        (_JEQ_K, 0, 1, _AF_UNIX),
        deny(errno.EACCES),
        allow,
        # socketpair(): its type, the low word of args[1], without SOCK_NONBLOCK/CLOEXEC
        (_LD_W_ABS, 0, 0, 24),
        (_AND_K, 0, 0, _SOCK_TYPE_MASK),
        (_JEQ_K, 0, 1, _SOCK_STREAM),
        allow,
        deny(errno.EACCES),
    ]
    program = body + tail
    filters = (_SockFilter * len(program))(*(_SockFilter(*op) for op in program))
    prog = _SockFprog(len(program), filters)
    prog._keep = filters
    return ctypes.pointer(prog), ""


def install(prog: Any) -> None:
    """Install the filter in this process (after ``PR_SET_NO_NEW_PRIVS``).

    Raises:
        OSError: ``prctl`` refused it.
    """
    libc = load_libc()
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_SECCOMP): {os.strerror(err)}")
