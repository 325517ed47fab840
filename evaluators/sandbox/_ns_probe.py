"""Whether this host lets a sandbox server give its candidates PID and IPC namespaces.

Found once per process, by trying in a throwaway child the steps a server and its children take
(:class:`~evoforge.evaluators.sandbox._pidns.PidNamespace` for the PID namespace, an
``unshare(CLONE_NEWIPC)`` with the child's mount namespace for IPC), so that what a server
announces (``Sandbox.protections``, ``evoforge plugins``) is what its candidates get.
"""

from __future__ import annotations

import ctypes
import functools
import os
from typing import Any

from evoforge.evaluators.sandbox._caps import has_sys_admin
from evoforge.evaluators.sandbox._host import load_libc
from evoforge.evaluators.sandbox._mounts import (
    CLONE_NEWIPC,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
)


def namespaces_here(asked: bool, mode: str) -> tuple[str, str]:
    """``(why no PID namespace, why no IPC namespace)`` for a server's children: ``asked`` is
    ``Isolation.namespaces``, ``mode`` the filesystem plan's (``""`` when it is off)."""
    if not asked:
        return "not asked", "not asked"
    if not mode:
        return "needs the filesystem isolation (a mount namespace)", (
            "needs the filesystem isolation (a mount namespace)"
        )
    why_pid, why_ipc = namespace_support()
    if mode == "user namespace" and not why_pid:
        why_pid = "needs a server with CAP_SYS_ADMIN (it runs as another user)"
    return why_pid, why_ipc


@functools.cache
def namespace_support() -> tuple[str, str]:
    """``(why no PID namespace, why no IPC namespace)``; "" where this process may make one.

    Found once, by trying in a throwaway child: a PID namespace needs ``CAP_SYS_ADMIN`` here
    (the server makes one for its candidates and forks each into it with ``setns``), and the
    child must be able to mount a ``proc`` for it; an IPC namespace is unshared by the child
    with its mount namespace (as root, or inside its user namespace).
    """
    libc = load_libc()
    if libc is None:
        return "needs Linux namespaces", "needs Linux namespaces"
    if not has_sys_admin():
        no_pid = "needs CAP_SYS_ADMIN in the server (it runs as another user)"
        ipc_flags = CLONE_NEWUSER | CLONE_NEWIPC
    else:
        no_pid = ""
        ipc_flags = CLONE_NEWIPC
    errors_r, errors_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 0
        try:
            os.close(errors_r)
            if libc.unshare(ipc_flags) != 0:
                os.write(errors_w, f"ipc:unshare(CLONE_NEWIPC): {_errno_text()}\n".encode())
                code |= 2
            if not no_pid:
                code |= _probe_pid_namespace(libc, errors_w)
        finally:
            os._exit(code)
    os.close(errors_w)
    with os.fdopen(errors_r, "rb") as reader:
        lines = reader.read().decode(errors="replace").splitlines()
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    reasons = {kind: why for kind, _, why in (line.partition(":") for line in lines)}
    if code < 0 or code > 3:
        return f"the probe ended with {code}", f"the probe ended with {code}"
    why_pid = no_pid or (reasons.get("pid", "refused") if code & 1 else "")
    why_ipc = reasons.get("ipc", "refused") if code & 2 else ""
    return why_pid, why_ipc


def _probe_pid_namespace(libc: Any, errors_w: int) -> int:
    """In the probe child: the server's steps for a PID namespace; 0, or 1 with why."""
    own = os.open("/proc/self/ns/pid", os.O_RDONLY)
    if libc.unshare(CLONE_NEWPID) != 0:
        os.write(errors_w, f"pid:unshare(CLONE_NEWPID): {_errno_text()}\n".encode())
        return 1
    child = os.fork()
    if child == 0:
        ok = libc.unshare(CLONE_NEWNS) == 0
        ok = ok and libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None) == 0
        flags = ctypes.c_ulong(MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
        ok = ok and libc.mount(b"proc", b"/proc", b"proc", flags, None) == 0
        if not ok:
            os.write(errors_w, f"pid:mount proc: {_errno_text()}\n".encode())
        os._exit(0 if ok and os.getpid() == 1 else 1)
    _, status = os.waitpid(child, 0)
    if libc.setns(own, CLONE_NEWPID) != 0:
        os.write(errors_w, f"pid:setns back: {_errno_text()}\n".encode())
        return 1
    return 0 if os.waitstatus_to_exitcode(status) == 0 else 1


def _errno_text() -> str:
    return os.strerror(ctypes.get_errno())
