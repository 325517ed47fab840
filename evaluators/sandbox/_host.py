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
import errno
import functools
import os
import pwd
import signal
import stat
import sys
import tempfile
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
    libc = load_libc()
    return libc is not None and libc.unshare(_CLONE_NEWNET) == 0


@functools.cache
def host_network_namespace() -> str:
    """Why this process may not unshare a network namespace, or "" (tried in a child)."""
    libc = load_libc()
    if libc is None:
        return "needs Linux network namespaces"
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os._exit(0 if libc.unshare(_CLONE_NEWNET) == 0 else 1)
    _, status = os.waitpid(pid, 0)
    return "" if os.waitstatus_to_exitcode(status) == 0 else "unshare(CLONE_NEWNET) is refused"


def enter_private_mount_namespace() -> bool:
    """Move this process into a mount namespace of its own that propagates nothing; False
    where that is not allowed (only root may).

    Its view of the files does not change. Sandboxed children forked afterwards copy a tree
    with no shared mounts, so they need not make theirs private (about 0.1 ms each).
    """
    libc = load_libc()
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


def python_paths() -> tuple[list[str], list[str]]:
    """The directories a candidate's imports may read, real paths, outermost first.

    Returns:
        ``(essential, other)``: the interpreter's prefixes (standard library, site-packages,
        the executable) and the folders of loaded packages that live elsewhere (an editable
        install maps ``evoforge.archive`` to the project's ``archive/``); then the rest of
        ``sys.path`` (the working directory, which ``python -m`` puts first, is left out).
    """
    essential = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    essential.add(os.path.dirname(os.path.realpath(sys.executable)))
    for name, module in list(sys.modules.items()):
        if name.startswith("__editable__") and isinstance(getattr(module, "MAPPING", None), dict):
            essential.update(v for v in module.MAPPING.values() if isinstance(v, str))
        folders = getattr(module, "__path__", None)
        if isinstance(folders, list):  # a package (some modules fake __path__ with objects)
            essential.update(f for f in folders if isinstance(f, str))
    cwd = os.path.realpath(os.getcwd())
    other = {p for p in sys.path if p and os.path.realpath(p) != cwd}
    outer = _outermost(essential)
    return outer, [p for p in _outermost(other) if not any(_inside(e, p) for e in outer)]


def _outermost(paths: set[str]) -> list[str]:
    """Real paths of the existing folders, without those inside another (one bind of the
    outer one carries them)."""
    real = {os.path.realpath(p) for p in paths if os.path.isdir(p)}
    return [p for p in sorted(real) if not any(o != p and _inside(o, p) for o in real)]


def unreachable(uid: int, gid: int, paths: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """What ``uid`` cannot reach of ``paths``.

    Returns:
        ``({blocked folder: [paths below it]}, [paths that cannot be fixed])``: a path whose
        ancestor ``uid`` may not traverse (a 0700 home) can be made reachable by covering that
        ancestor with a traversable ``tmpfs`` and binding the path back; one that ``uid`` may
        not read itself cannot.
    """
    blocked: dict[str, list[str]] = {}
    unfixable = []
    for path in paths:
        if _can_read_dir(path, uid, gid):
            continue
        first = _first_untraversable(path, uid, gid)
        if first is None or first == path:
            unfixable.append(path)
        else:
            blocked.setdefault(first, []).append(path)
    # A blocked folder below another: the outer cover carries it (its binds come back whole).
    for folder in sorted(blocked, key=len, reverse=True):
        outer = next((o for o in blocked if o != folder and _inside(o, folder)), None)
        if outer is not None:
            blocked[outer].extend(blocked.pop(folder))
    return blocked, unfixable


def _first_untraversable(path: str, uid: int, gid: int) -> str | None:
    """The outermost folder on the way to ``path`` (``path`` included) that ``uid`` may not
    search; None if every one allows it (then ``path`` itself is not readable)."""
    parts = os.path.abspath(path).split(os.sep)
    for i in range(2, len(parts) + 1):
        folder = os.sep.join(parts[:i]) or os.sep
        try:
            st = os.stat(folder)
        except OSError:
            return folder
        if not _allows(st, uid, gid, 1):
            return folder
    return None


def _inside(outer: str, inner: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def is_subreaper() -> bool:
    """Whether this process adopts its descendants' orphans (:func:`harden_server` made it so).

    Only then may the sandbox treat every child it did not start as a candidate's leftover:
    in any other process (a controller running one-shot jobs) children belong to others.
    """
    value = ctypes.c_int(0)
    try:
        libc = load_libc()
        return libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(value)) == 0 and bool(value.value)
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
    """Delete a directory tree, however deep or wide, including subdirectories a candidate made
    unreadable. A missing ``path`` is fine.

    Iterative, through directory descriptors (``openat``/``unlinkat``, never following a link):
    a tree a candidate made deeper than the recursion limit or longer than ``PATH_MAX`` is
    removed like any other, which ``shutil.rmtree`` cannot (it recurses). Permissions are only
    ever changed strictly inside the tree, never on ``path``'s parent (which may be ``/tmp``).

    Raises:
        OSError: something could not be removed (e.g. an immutable file).
    """
    try:
        top = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        return
    except NotADirectoryError:
        os.unlink(path)
        return
    except OSError as exc:
        if exc.errno != errno.ELOOP:  # a symlink: remove the link, never what it points to
            raise
        os.unlink(path)
        return
    fd = top
    # Per level below ``path``: the name of the directory we are in, and its pending subdirs.
    names: list[str] = []
    pending: list[list[str]] = [_empty_files(fd)]
    try:
        while True:
            if pending[-1]:
                name = pending[-1].pop()
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except PermissionError:
                    os.chmod(name, 0o700, dir_fd=fd)
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    continue
                os.close(fd)
                fd = child
                names.append(name)
                pending.append(_empty_files(fd))
                continue
            if not names:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            pending.pop()
            os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(path)


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def _empty_files(fd: int) -> list[str]:
    """Delete every entry of the directory ``fd`` that is not a directory; its subdirectories."""
    subdirs = []
    unlocked = False
    with os.scandir(fd) as entries:
        listed = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
    for name, is_dir in listed:
        if is_dir:
            subdirs.append(name)
            continue
        try:
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            pass
        except PermissionError:
            if unlocked:
                raise
            os.fchmod(fd, 0o700)  # a directory below ``path`` that a candidate made read-only
            unlocked = True
            os.unlink(name, dir_fd=fd)
    if subdirs and not unlocked:
        with contextlib.suppress(OSError):
            if not os.access(".", os.W_OK, dir_fd=fd):
                os.fchmod(fd, 0o700)
    return subdirs


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
        self._leftovers = 0
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
            self._remove(used)
        if os.path.lexists(self.path):
            os.rename(self.path, used)
        self._make()
        if os.path.lexists(used):
            self._remove(used)

    def _remove(self, used: str) -> None:
        """Remove a used directory; one that resists (say, an immutable file) is moved aside
        for :meth:`close` to try again, so it never blocks the next run."""
        try:
            remove_workdir(used)
        except OSError as exc:
            self._leftovers += 1
            aside = os.path.join(self.root, f"leftover-{self._leftovers}")
            os.rename(used, aside)
            print(f"evoforge sandbox: could not empty {used} ({exc}); moved aside", file=sys.stderr)

    def close(self) -> None:
        remove_workdir(self.root)

    def _make(self) -> None:
        os.mkdir(self.path, 0o700)
        if self._user is not None:
            os.chown(self.path, *self._user)


def prctl(option: int, value: int) -> bool:
    libc = load_libc()
    return libc is not None and libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0


def load_libc() -> Any:
    """The C library, loaded once with ``use_errno``; ``None`` off Linux (the Linux-only steps
    are then no-ops)."""
    global _libc_handle
    if _libc_handle is None and sys.platform.startswith("linux"):
        _libc_handle = ctypes.CDLL(None, use_errno=True)
    return _libc_handle


def _allows(st: os.stat_result, uid: int, gid: int, want: int) -> bool:
    """Whether mode bits let ``uid``/``gid`` do ``want`` (4 read, 1 search); ``uid`` 0 as
    an ordinary owner (a candidate holds no capability)."""
    shift = 6 if st.st_uid == uid else 3 if st.st_gid == gid else 0
    return (stat.S_IMODE(st.st_mode) >> shift) & want == want


def _can_read_dir(path: str, uid: int, gid: int) -> bool:
    path = os.path.abspath(path)
    try:
        if not _allows(os.stat(path), uid, gid, 5):
            return False
        while (parent := os.path.dirname(path)) != path:
            if not _allows(os.stat(parent), uid, gid, 1):
                return False
            path = parent
    except OSError:
        return False
    return True
