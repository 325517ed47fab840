"""Host-side preparation for sandboxes: done once per server process, not per candidate.

A server that forks sandboxed children (see :mod:`evoforge.evaluators.sandbox._run`) calls, at
start-up: :func:`harden_server`, optionally :func:`enter_network_namespace` and
:func:`enter_private_mount_namespace`, :func:`resolve_user` (plus :func:`unreadable_python_path` to
check the switch is usable), and creates a :class:`Workdir`. Linux gets all of it; elsewhere the
Linux-only parts are no-ops.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pwd
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Callable
from typing import Any

# prctl(2) options and clone(2) flags (Linux).
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 4, 36, 38
PR_GET_CHILD_SUBREAPER = 37
_CLONE_NEWNET, _CLONE_NEWNS = 0x40000000, 0x00020000
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000

_libc_handle: Any = None


def harden_server() -> None:
    """Make this process a fit parent for sandboxed children (Linux; partly elsewhere).

    - child subreaper: orphans of the candidates are re-parented here, so the sandbox can find
      and kill descendants that escaped the candidate's process group;
    - not dumpable: processes of the same user can neither read this process's memory nor
      open its descriptors through ``/proc`` (the protocol pipes), nor ptrace it;
    - SIGXFSZ ignored, and so ignored in every child: a write past ``RLIMIT_FSIZE`` fails with
      EFBIG instead of killing. Set here, not per child, because every Python object a child
      touches costs a copy-on-write page fault (about 3 us each on a VM).
    """
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_PDEATHSIG, 0)  # also warms the ctypes call path before any fork
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def enter_network_namespace() -> bool:
    """Move this process into a new, empty network namespace; False where that is not allowed.

    Children forked afterwards inherit it, so a server calls this once at start-up and every
    candidate runs without network at no per-candidate cost (a namespace per child costs about
    1 ms here).
    """
    libc = _libc()
    return libc is not None and libc.unshare(_CLONE_NEWNET) == 0


def enter_private_mount_namespace() -> bool:
    """Move this process into a mount namespace of its own that propagates nothing; False
    where that is not allowed (only root may).

    Its view of the files does not change. Sandboxed children forked afterwards copy a tree
    with no shared mounts, so they need not make theirs private (about 0.1 ms each).
    """
    libc = _libc()
    if libc is None or libc.unshare(_CLONE_NEWNS) != 0:
        return False
    flags = ctypes.c_ulong(_MS_REC | _MS_PRIVATE)
    return libc.mount(None, b"/", None, flags, None) == 0


def die_with_parent() -> None:
    """Have the kernel SIGKILL this process when its parent exits (Linux; no-op elsewhere)."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def resolve_user(user: str | int | None) -> tuple[int, int] | None:
    """``(uid, gid)`` for running candidates as ``user``; ``None`` when not root or not asked.

    Only root can switch users, and only a switch away from root is worth anything, so a
    non-root server keeps its own user (and says so in its handshake).

    Raises:
        ValueError: ``user`` names no account on this host.
    """
    if user is None or user == "" or os.geteuid() != 0:
        return None
    if isinstance(user, int):
        return user, user
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise ValueError(
            f"no user named {user!r} on this host; name an existing unprivileged "
            "account (e.g. 'nobody') or a numeric uid"
        ) from None
    return entry.pw_uid, entry.pw_gid


def unreadable_python_path(uid: int, gid: int) -> str:
    """The first directory of this interpreter (stdlib, site-packages) that ``uid`` cannot
    read, or "" when it can read them all. A candidate switched to a user who cannot read the
    stdlib fails on its first ``import`` of a module the server had not loaded."""
    import sysconfig

    names = ("stdlib", "platstdlib", "purelib", "platlib")
    for path in sorted({sysconfig.get_path(n) for n in names} - {None}):
        if os.path.isdir(path) and not _can_read_dir(path, uid, gid):
            return path
    return ""


def is_subreaper() -> bool:
    """Whether this process adopts its descendants' orphans (:func:`harden_server` made it so).

    Only then may the sandbox treat every child it did not start as a candidate's leftover:
    in any other process (a controller running one-shot jobs) children belong to others.
    """
    value = ctypes.c_int(0)
    try:
        return _libc().prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(value)) == 0 and bool(value.value)
    except (OSError, AttributeError):
        return False


def children(pid: int | str = "self") -> set[int]:
    """The direct children of a process (Linux ``/proc``; empty where unavailable)."""
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                found.update(int(p) for p in f.read().split())
    return found


def remove_workdir(path: str) -> None:
    """Delete a directory tree, including subdirectories a candidate made unreadable.

    A missing ``path`` is fine. Permissions are only ever changed strictly inside the tree,
    never on ``path``'s parent (which may be ``/tmp``).
    """
    inside = os.path.join(os.path.abspath(path), "")

    def unlock_and_retry(func: Callable[..., Any], failed: str, _exc: object) -> None:
        failed = os.path.abspath(failed)
        if not failed.startswith(inside):
            return  # the root itself (e.g. already gone): nothing to unlock
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(failed), 0o700)  # the root or a directory below it
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, 0o700)
                shutil.rmtree(failed, onerror=unlock_and_retry)
            else:
                func(failed)

    shutil.rmtree(path, onerror=unlock_and_retry)


class Workdir:
    """One fixed path for a server's runs, emptied between runs off the latency path.

    Each run gets a new, empty directory at the same path: :meth:`recycle` (called after the
    response is sent) renames the used one away, creates the next and deletes the old. A fixed
    path lets the server set ``HOME``/``TMPDIR`` once (:meth:`export`) instead of in every
    child, and keeps ``mkdir``/``rmtree`` (about 0.3 ms on this disk) out of the response time.
    """

    def __init__(self, user: tuple[int, int] | None = None, root: str | None = None) -> None:
        """Use ``root`` (an existing empty directory) or a new temporary one."""
        self._user = user
        self.root = root or tempfile.mkdtemp(prefix="evoforge-")
        os.chmod(self.root, 0o711)  # a switched user may traverse it, not list it
        self.path = os.path.join(self.root, "run")
        self._make()

    def export(self) -> None:
        """Point ``HOME``, ``TMPDIR`` and :mod:`tempfile` of this process (and so of every
        child forked from now on) at :attr:`path`."""
        os.environ["HOME"] = os.environ["TMPDIR"] = self.path
        tempfile.tempdir = self.path

    def recycle(self) -> None:
        """Replace :attr:`path` by a new empty directory; delete the used one.

        The candidate may have deleted, replaced or moved its directory, or the root itself:
        whatever it left, the next run still gets a fresh, empty directory.
        """
        if not os.path.isdir(self.root) or os.path.islink(self.root):
            if os.path.lexists(self.root):
                os.unlink(self.root)
            os.mkdir(self.root, 0o711)
        used = os.path.join(self.root, "used")
        if os.path.lexists(used):
            remove_workdir(used)
        if os.path.lexists(self.path):
            os.rename(self.path, used)
        self._make()
        if os.path.lexists(used):
            remove_workdir(used)

    def close(self) -> None:
        remove_workdir(self.root)

    def _make(self) -> None:
        os.mkdir(self.path, 0o700)
        if self._user is not None:
            os.chown(self.path, *self._user)


def prctl(option: int, value: int) -> bool:
    libc = _libc()
    return libc is not None and libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0


def _libc() -> Any:
    global _libc_handle
    if _libc_handle is None and sys.platform.startswith("linux"):
        _libc_handle = ctypes.CDLL(None, use_errno=True)
    return _libc_handle


def _can_read_dir(path: str, uid: int, gid: int) -> bool:
    def allows(st: os.stat_result, want: int) -> bool:  # want: 4 read, 1 search
        shift = 6 if st.st_uid == uid else 3 if st.st_gid == gid else 0
        return (stat.S_IMODE(st.st_mode) >> shift) & want == want

    path = os.path.abspath(path)
    if not allows(os.stat(path), 5):
        return False
    while (parent := os.path.dirname(path)) != path:
        if not allows(os.stat(parent), 1):
            return False
        path = parent
    return True
