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
from typing import TYPE_CHECKING, Any

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

SHM = "/dev/shm"
"""Where a child gets its private, size-capped ``tmpfs`` (``multiprocessing`` needs one)."""

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
    for kind, *args, what in plan.steps or compile_steps(plan):
        if kind == "mount":
            _check(libc.mount(*args), what)
        elif kind == "mkdirs":
            _mkdirs(*args)
        elif kind == "touch":
            os.close(os.open(args[0], os.O_CREAT | os.O_WRONLY, 0o644))
        elif kind == "setattr":
            _check(libc.syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, *args), what)
        else:  # kernels before 5.12: remount each mount point read-only
            _remount_all_read_only()
            for path in (plan.workdir, SHM) if plan.shm_mb else (plan.workdir,):
                _remount(path, _current_flags(path) & ~MS_RDONLY | MS_NOSUID | MS_NODEV)
            for device in plan.devices:
                _remount(device, _current_flags(device) & ~MS_NODEV)


def compile_steps(plan: FilesystemPlan) -> tuple[tuple[Any, ...], ...]:
    """The plan's system calls with their arguments converted for ctypes, ready to call.

    Built in the server, so that a child spends its time in the kernel, not in Python.
    """

    def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = ""):
        encoded = (s.encode() if s else None for s in (source, target, fstype))
        return ("mount", *encoded, ctypes.c_ulong(flags), data.encode() or None, f"mount {target}")

    def setattr(path: str, attr_set: int, attr_clr: int, *, recursive: bool):
        attr = _MountAttr(attr_set, attr_clr, 0, 0)
        flags = _AT_RECURSIVE if recursive else 0
        pointer, size = ctypes.pointer(attr), ctypes.sizeof(attr)
        return ("setattr", path.encode(), flags, pointer, size, f"mount_setattr {path}")

    steps = []
    if plan.make_private:  # or mounts made below would propagate back to the host
        steps.append(mount(None, "/", None, MS_REC | MS_PRIVATE))
    for path, is_dir in plan.hidden:
        if is_dir:
            flags = MS_RDONLY | MS_NOSUID | MS_NODEV
            steps.append(mount("tmpfs", path, "tmpfs", flags, "size=4k,mode=0555"))
        else:  # a device node on a nodev mount: opening it fails with EACCES
            steps.append(mount("/dev/null", path, None, MS_BIND))
    if plan.shm_mb:
        options = f"size={plan.shm_mb}m,mode=1777"
        steps.append(mount("tmpfs", SHM, "tmpfs", MS_NOSUID | MS_NODEV, options))
    if plan.proc:  # read-only from the start: /proc/sys would otherwise be writable by uid 0
        flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
        steps.append(mount("proc", "/proc", "proc", flags))
    for folder, paths in plan.reach:
        # Staged on the workdir (an empty folder that exists), then moved over the folder: the
        # binds must be made while the paths are still visible.
        staging = mount("tmpfs", plan.workdir, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755")
        steps.append(staging)
        for path in paths:
            target = os.path.join(plan.workdir, os.path.relpath(path, folder))
            if os.path.isdir(path):
                steps.append(("mkdirs", plan.workdir, target, f"mkdir {target}"))
            else:  # a file (a declared data file): its mount point is an empty file
                parent = os.path.dirname(target)
                steps.append(("mkdirs", plan.workdir, parent, f"mkdir {parent}"))
                steps.append(("touch", target, f"create {target}"))
            steps.append(mount(path, target, None, MS_BIND | MS_REC))
        steps.append(mount(plan.workdir, folder, None, MS_MOVE))
    if plan.disk_mb:  # the quota: a fresh tmpfs of its own size (charged to the memory cgroup)
        uid, gid = plan.owner or (os.geteuid(), os.getegid())
        options = f"size={plan.disk_mb}m,mode=0700,uid={uid},gid={gid}"
        steps.append(mount("tmpfs", plan.workdir, "tmpfs", MS_NOSUID | MS_NODEV, options))
    else:
        steps.append(mount(plan.workdir, plan.workdir, None, MS_BIND))
    steps.extend(mount(device, device, None, MS_BIND) for device in plan.devices)
    if not plan.use_setattr:
        return (*steps, ("remount", "remount read-only"))
    everything = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
    steps.append(setattr("/", everything, 0, recursive=True))
    for path in (plan.workdir, SHM) if plan.shm_mb else (plan.workdir,):
        steps.append(setattr(path, 0, MOUNT_ATTR_RDONLY, recursive=False))
    steps.extend(setattr(device, 0, MOUNT_ATTR_NODEV, recursive=False) for device in plan.devices)
    return tuple(steps)


def resolve_functions() -> None:
    """Resolve the libc functions a child calls, here: in a child each lookup would be paid
    anew (about 0.3 ms in all), because what a child caches dies with it."""
    libc = load_libc()
    for name in ("unshare", "mount", "syscall", "prctl", "setns"):
        getattr(libc, name)
    libc.syscall.restype = ctypes.c_long


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


def _mkdirs(base: str, target: str) -> None:
    """Make ``target`` and the folders between it and ``base`` (a fresh tmpfs), each 0755
    whatever the umask, so any user may traverse them."""
    path = base
    for part in os.path.relpath(target, base).split(os.sep):
        path = os.path.join(path, part)
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        except OSError as exc:
            raise OSError(exc.errno, f"mkdir {path}: {exc.strerror}") from None
        os.chmod(path, 0o755)


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
