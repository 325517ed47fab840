"""The mount system calls a sandboxed child makes: a plan compiled to calls, then made.

:func:`compile_steps` turns a :class:`~evoforge.evaluators.sandbox._mount_plan.FilesystemPlan`
into ``mount``/``mount_setattr`` calls with their arguments already converted for ctypes (in the
server, once), and :func:`apply_filesystem` makes them in the child, so that a child spends its
set-up in the kernel, not in Python. What is bound where, and why, is the plan's business
(:mod:`evoforge.evaluators.sandbox._mount_plan`).

On kernels before 5.12 (no ``mount_setattr``) every mount point of ``/proc/self/mountinfo`` is
remounted instead, keeping the options it had.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
from typing import TYPE_CHECKING, Any

from evoforge.evaluators.sandbox._gpu import proc_read_only
from evoforge.evaluators.sandbox._host import load_libc

if TYPE_CHECKING:
    from evoforge.evaluators.sandbox._mount_plan import FilesystemPlan

# clone(2) flags, mount(2) flags, mount_setattr(2) constants (Linux UAPI).
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
CLONE_NEWIPC, CLONE_NEWPID = 0x08000000, 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE, MS_MOVE = 0x20, 0x1000, 0x4000, 0x40000, 0x2000
MS_NOATIME, MS_NODIRATIME, MS_RELATIME, MS_STRICTATIME = 0x400, 0x800, 0x200000, 0x1000000
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV = 0x1, 0x2, 0x4
_AT_FDCWD, _AT_RECURSIVE = -100, 0x8000
_PR_GET_DUMPABLE, _PR_SET_DUMPABLE = 3, 4
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture since Linux 5.12

_MNT_DETACH = 2
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine(), 155)

SHM = "/dev/shm"
"""Where a child gets its private, size-capped ``tmpfs`` (``multiprocessing`` needs one)."""
OLD_ROOT = "/.oldroot"
"""Where the host's tree hangs in the new root while it is being filled (then detached)."""
QUOTA_WORKDIR = "/tmp/.workdir"
"""The workdir's folder in the quota's ``tmpfs`` when the workdir lives outside ``/tmp``."""
OVERLAY = "/tmp/.overlay"
"""Where an overlay workdir's writes go (``upper``) and overlayfs works (``work``), in the
quota's ``tmpfs``: what a run writes counts against its quota and dies with it."""
DEV_LINKS = (
    ("/dev/fd", "/proc/self/fd"),
    ("/dev/stdin", "/proc/self/fd/0"),
    ("/dev/stdout", "/proc/self/fd/1"),
    ("/dev/stderr", "/proc/self/fd/2"),
)
"""The usual symlinks of ``/dev`` (shells' process substitution, tools that write to
``/dev/stdout``)."""

_OPTION_FLAGS = {  # per-mount options of /proc/self/mountinfo that a remount must keep
    "ro": MS_RDONLY,
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def apply_filesystem(plan: FilesystemPlan) -> None:
    """Enter a private mount namespace laid out as ``plan`` says (in the child; then ``chdir``).

    Raises:
        OSError: a step failed; its message names the step.
    """
    if not plan.mode:
        return
    libc = load_libc()
    uid, gid = os.geteuid(), os.getegid()
    user_ns = plan.mode == "user namespace"
    flags = (
        CLONE_NEWNS
        | (CLONE_NEWUSER if user_ns else 0)
        | (CLONE_NEWIPC if plan.ipc_namespace else 0)
    )
    _check(libc.unshare(flags), "unshare")
    if user_ns:  # map our ids to themselves, so files keep their owners
        # A process that is not dumpable (a hardened server's children) has its /proc/self
        # owned by root, which this user namespace cannot write as: dumpable for the maps.
        dumpable = libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)
        libc.prctl(_PR_SET_DUMPABLE, ctypes.c_ulong(1), 0, 0, 0)
        _write("/proc/self/setgroups", b"deny")
        _write("/proc/self/uid_map", b"%d %d 1" % (uid, uid))
        _write("/proc/self/gid_map", b"%d %d 1" % (gid, gid))
        libc.prctl(_PR_SET_DUMPABLE, ctypes.c_ulong(dumpable), 0, 0, 0)
    umask = os.umask(0o022)  # the root's folders are 0755 whatever the server's umask
    try:
        _run_steps(plan, libc)
    finally:
        os.umask(umask)


def _run_steps(plan: FilesystemPlan, libc: Any) -> None:
    for kind, *args, what in plan.steps or compile_steps(plan):
        if kind == "mount":
            _check(libc.mount(*args), what)
        elif kind == "mkdir":
            _os_step(os.mkdir, what, args[0], 0o755)
        elif kind == "touch":
            _os_step(lambda p: os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)), what, *args)
        elif kind == "symlink":
            _os_step(os.symlink, what, *args)
        elif kind == "write":
            _os_step(_write_new, what, *args)
        elif kind == "own":
            _os_step(os.chown, what, *args)
            _os_step(os.chmod, what, args[0], 0o700)
        elif kind == "pivot":  # new root: the staging tmpfs; the host's tree goes to put_old
            _os_step(os.chdir, what, args[0])
            _check(libc.syscall(_SYS_PIVOT_ROOT, b".", args[1]), what)
            os.chdir("/")
        elif kind == "detach":
            _check(libc.umount2(args[0], _MNT_DETACH), what)
            _os_step(os.rmdir, what, args[0])
        elif kind == "setattr":
            _check(libc.syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, *args), what)
        else:  # kernels before 5.12: remount each mount point read-only
            _remount_all_read_only()
            for path in plan.writable:
                _remount(path, _current_flags(path) & ~MS_RDONLY | MS_NOSUID | MS_NODEV)
            for device in plan.devices:
                _remount(device, _current_flags(device) & ~MS_NODEV)


def compile_steps(plan: FilesystemPlan) -> tuple[tuple[Any, ...], ...]:
    """The plan's system calls with their arguments converted for ctypes, ready to call.

    Built in the server, so that a child spends its time in the kernel, not in Python. The
    child mounts a ``tmpfs`` on the plan's staging folder, pivots into it (the host's tree
    then hangs at :data:`OLD_ROOT`), binds what the root holds from there, mounts its own
    ``/tmp`` (the quota), ``/dev/shm`` and ``/proc``, detaches the host's tree and makes
    everything read-only but ``/tmp``, the workdir and ``/dev/shm``.
    """
    steps: list[tuple[Any, ...]] = []
    made = {"/"}
    root = plan.root
    bound = [path for path, _ in root.binds] if root else []

    def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = ""):
        encoded = (s.encode() if s else None for s in (source, target, fstype))
        steps.append(
            ("mount", *encoded, ctypes.c_ulong(flags), data.encode() or None, f"mount {target}")
        )

    def mkdirs(path: str) -> None:
        """Make ``path`` and its missing parents in the root's own tmpfs (never in a bind,
        which is a host folder until the end)."""
        if path in made or any(_contains(b, path) for b in bound):
            return
        mkdirs(os.path.dirname(path))
        made.add(path)
        steps.append(("mkdir", path, f"mkdir {path}"))

    def file_point(path: str) -> None:
        mkdirs(os.path.dirname(path))
        if path not in made and not any(_contains(b, path) for b in bound):
            made.add(path)
            steps.append(("touch", path, f"create {path}"))

    def setattr(path: str, attr_set: int, attr_clr: int, *, recursive: bool):
        attr = _MountAttr(attr_set, attr_clr, 0, 0)
        flags = _AT_RECURSIVE if recursive else 0
        pointer, size = ctypes.pointer(attr), ctypes.sizeof(attr)
        steps.append(("setattr", path.encode(), flags, pointer, size, f"mount_setattr {path}"))

    if plan.make_private:  # or mounts made below would propagate back to the host
        mount(None, "/", None, MS_REC | MS_PRIVATE)
    staging, old = plan.staging, OLD_ROOT
    mount("tmpfs", staging, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755")
    steps.append(("mkdir", staging + old, f"mkdir {staging + old}"))
    steps.append(("pivot", staging, old.lstrip("/").encode(), f"pivot_root into {staging}"))
    made.add(old)
    # /tmp first: the quota (or a private tmpfs without one), binds under /tmp go inside it
    mkdirs("/tmp")
    size = plan.disk_mb or plan.tmp_mb
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={size}m,mode=1777")
    workdir = plan.workdir
    inside_bind = any(_contains(b, workdir) for b in bound)
    separate = plan.disk_mb and not plan.overlay and (inside_bind or not _contains("/tmp", workdir))
    if separate:  # the workdir is a folder of the quota's tmpfs, bound at its place below
        steps.append(("mkdir", QUOTA_WORKDIR, f"mkdir {QUOTA_WORKDIR}"))
        steps.append(("own", QUOTA_WORKDIR, *(plan.owner or (-1, -1)), f"chown {workdir}"))
    if root is not None:
        for folder in root.dirs:
            mkdirs(folder)
        for path, target in root.links:
            mkdirs(os.path.dirname(path))
            made.add(path)
            steps.append(("symlink", target, path, f"symlink {path}"))
        for path, is_dir in root.binds:
            bound.remove(path)  # its own mount point is made in the root, not inside itself
            if is_dir:
                mkdirs(path)
            else:
                file_point(path)
            bound.append(path)
            mount(old + path, path, None, MS_BIND | MS_REC)
        for path, content in root.files:
            mkdirs(os.path.dirname(path))
            steps.append(("write", path, content, f"write {path}"))
    if plan.overlay:  # the host's folder below (its files), the quota's tmpfs above
        for folder in (OVERLAY, OVERLAY + "/upper", OVERLAY + "/work"):
            steps.append(("mkdir", folder, f"mkdir {folder}"))
        steps.append(("own", OVERLAY + "/upper", *(plan.owner or (-1, -1)), f"chown {workdir}"))
        mkdirs(workdir)
        layers = f"lowerdir={old + workdir},upperdir={OVERLAY}/upper,workdir={OVERLAY}/work"
        if plan.mode == "user namespace":  # trusted.* xattrs are root's in the first namespace
            layers += ",userxattr"
        mount("overlay", workdir, "overlay", MS_NOSUID | MS_NODEV, layers)
    elif not plan.disk_mb:  # the host's directory, as it is (a repository's copy)
        mkdirs(workdir)
        mount(old + workdir, workdir, None, MS_BIND)
    elif separate:
        mkdirs(workdir)
        mount(QUOTA_WORKDIR, workdir, None, MS_BIND)
    else:  # a folder of the quota's tmpfs, at its own path
        mkdirs(workdir)
        steps.append(("own", workdir, *(plan.owner or (-1, -1)), f"chown {workdir}"))
    mkdirs("/dev")
    for device in plan.devices:
        file_point(device)
        mount(old + device, device, None, MS_BIND)
    for name, target in DEV_LINKS:
        steps.append(("symlink", target, name, f"symlink {name}"))
    mkdirs(SHM)
    if plan.shm_mb:
        options = f"size={plan.shm_mb}m,mode=1777"
        mount("tmpfs", SHM, "tmpfs", MS_NOSUID | MS_NODEV, options)
    mkdirs("/proc")
    if plan.proc and plan.gpu:  # writable for the driver (FilesystemPlan.writable) but for
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        for path in proc_read_only():  # its system-wide parts: binds, made read-only with
            mount(path, path, None, MS_BIND | MS_REC)  # the rest of the root below
    elif plan.proc:  # read-only from the start: /proc/sys would otherwise be writable by uid 0
        mount("proc", "/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    else:  # the host's (no PID namespace of the candidates' own), read-only like the rest
        mount(old + "/proc", "/proc", None, MS_BIND | MS_REC)
    for path, is_dir in plan.hidden:  # inside a bind: covered by an empty read-only mount
        if is_dir:
            flags = MS_RDONLY | MS_NOSUID | MS_NODEV
            mount("tmpfs", path, "tmpfs", flags, "size=4k,mode=0555")
        else:  # a device node on a nodev mount: opening it fails with EACCES
            mount("/dev/null", path, None, MS_BIND)
    steps.append(("detach", old.encode(), old, f"detach the host's tree ({old})"))
    if not plan.use_setattr:
        return (*steps, ("remount", "remount read-only"))
    everything = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
    setattr("/", everything, 0, recursive=True)
    for path in plan.writable:
        setattr(path, 0, MOUNT_ATTR_RDONLY, recursive=False)
    for device in plan.devices:
        setattr(device, 0, MOUNT_ATTR_NODEV, recursive=False)
    return tuple(steps)


def resolve_functions() -> None:
    """Resolve the libc functions a child calls, here: in a child each lookup would be paid
    anew (about 0.3 ms in all), because what a child caches dies with it."""
    libc = load_libc()
    for name in ("unshare", "mount", "umount2", "syscall", "prctl", "setns"):
        getattr(libc, name)
    libc.syscall.restype = ctypes.c_long


def _contains(outer: str, inner: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def _os_step(call: Any, what: str, *args: Any) -> None:
    try:
        call(*args)
    except OSError as exc:
        raise OSError(exc.errno, f"{what}: {exc.strerror}") from None


def _write_new(path: str, content: bytes) -> None:
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
    try:
        os.write(fd, content)
    finally:
        os.close(fd)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    _check(
        load_libc().mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _write(path: str, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except OSError as exc:
        raise OSError(exc.errno, f"write {path}: {exc.strerror}") from None


def _mount_points() -> list[tuple[str, int]]:
    """``(mount point, flags)`` of every mount in this namespace, parents first."""
    points = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            fields = line.split()
            point = fields[4].decode()
            for escape in ("\\040", "\\011", "\\012", "\\134"):  # octal escapes of mountinfo
                point = point.replace(escape, chr(int(escape[1:], 8)))
            flags = 0
            for option in fields[5].decode().split(","):
                flags |= _OPTION_FLAGS.get(option, 0)
            points.append((point, flags))
    return points


def _current_flags(path: str) -> int:
    flags = 0
    for point, point_flags in _mount_points():
        if point == path:
            flags = point_flags  # the last listed is the one on top
    return flags


def _remount(path: str, flags: int) -> None:
    _mount(None, path, None, MS_REMOUNT | MS_BIND | flags)


def _remount_all_read_only() -> None:
    """The fallback for kernels without ``mount_setattr``: remount each mount point.

    A mount hidden under another cannot be reached by path, and so stays as it was: it is
    also out of the child's reach.
    """
    for point, flags in _mount_points():
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):  # under a hidden path
            _remount(point, flags | MS_RDONLY | MS_NOSUID | MS_NODEV)
