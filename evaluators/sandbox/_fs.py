"""Filesystem isolation of a sandboxed child: a private mount namespace, read-only but its workdir.

Planned once in the server (:func:`plan_filesystem`, which also finds out once per process
what this host allows), applied in each child before its request arrives
(:func:`apply_filesystem`). In the child's own mount namespace (mounts made private, so nothing
propagates back to the host):

- every mount is read-only, ``nosuid`` and ``nodev`` (``mount_setattr`` with ``AT_RECURSIVE``;
  on kernels before 5.12, each mount point of ``/proc/self/mountinfo`` is remounted);
- the workdir is bind-mounted on itself and made writable again: it is the only writable
  place on disk (it is also ``HOME`` and ``TMPDIR``; ``/tmp`` and ``/var/tmp`` are read-only);
- ``/dev/shm`` is a fresh, size-capped ``tmpfs`` (``multiprocessing`` needs it), so nothing
  written there outlives the run or reaches the host's;
- device nodes can be opened only where allowed (``/dev/null``, ``/dev/zero``, ``/dev/full``,
  ``/dev/random``, ``/dev/urandom`` and accelerators): each is bind-mounted on
  itself without ``nodev``; disks, ``/dev/kmsg``, ``/dev/kvm`` and the rest cannot be opened;
- hidden paths (the problem folder, credential files of the server user) are covered by an
  empty read-only ``tmpfs`` (a hidden file: by a device node that cannot be opened).

Root gets this with a plain mount namespace; another user through a user namespace of its own (uid
and gid mapped to themselves). Where neither is allowed (a container without ``CAP_SYS_ADMIN``, user
namespaces disabled), the plan says so and why, and children run without it. A child that then drops
every capability (:mod:`evoforge.evaluators.sandbox._caps`) cannot undo any of it: remounting,
unmounting and ``mount_setattr`` need ``CAP_SYS_ADMIN``, and in a user namespace of its own the
kernel locks the flags and mounts it inherited.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import glob
import os
import pwd
import stat
import tempfile
from dataclasses import dataclass, field
from typing import Any

from evoforge.evaluators.sandbox._host import _libc

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

DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    # Accelerators, for the evaluators that run kernels: NVIDIA, AMD, Intel/DRM, TPU, Neuron.
    "/dev/nvidia*",
    "/dev/nvidia-caps/*",
    "/dev/dri/*",
    "/dev/kfd",
    "/dev/accel*",
    "/dev/vfio/*",
    "/dev/neuron*",
)
"""Device nodes a candidate may open (glob patterns); every other one fails with EACCES."""

SECRET_PATHS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh",
    ".config/gcloud",
    ".config/hub",
    ".claude",
)
"""Credential files and folders under the server user's home, hidden when they exist. A
best-effort list: name others in ``Isolation.hidden_paths``."""

_SHM = "/dev/shm"
_MODES = ("mount namespace", "user namespace")
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


@dataclass(frozen=True)
class FilesystemPlan:
    """What a child does to its mount namespace; ``mode`` is empty when it does nothing.

    Attributes:
        mode: ``"mount namespace"`` (root), ``"user namespace"`` (any user), or ``""``.
        why_off: when ``mode`` is empty, why (``"not asked"``, or what the host refused).
        workdir: the one writable directory.
        hidden: ``(path, is_dir)`` pairs to cover.
        devices: device nodes that stay openable.
        shm_mb: size of the private ``/dev/shm`` (0: none, it stays read-only).
        use_setattr: ``mount_setattr`` works here (Linux >= 5.12); else remount each mount.
        make_private: the server's namespace has shared or slave mounts, so each child makes
            its copy private (about 0.1 ms; a server in a private namespace of its own,
            :func:`~evoforge.evaluators.sandbox._host.enter_private_mount_namespace`, saves it).
        notes: paths that were asked to be hidden and are not, with why.
        ipc_namespace: also unshare an IPC namespace (System V objects, POSIX queues).
        proc: mount a fresh, read-only ``/proc`` (the child runs in the candidates' PID
            namespace, so it shows that namespace only).
        reach: ``(folder, paths)`` pairs: each folder (one the candidate's user may not
            traverse, e.g. a 0700 home) is covered by an empty traversable ``tmpfs`` in which
            ``paths`` (the Python installation, a venv, the project's packages) are bound back
            at their own places, so a candidate that runs as an unprivileged user can import
            from them and sees nothing else of the folder (see ``candidate_user``).
    """

    mode: str
    why_off: str = ""
    workdir: str = ""
    hidden: tuple[tuple[str, bool], ...] = ()
    devices: tuple[str, ...] = ()
    shm_mb: int = 0
    use_setattr: bool = True
    make_private: bool = True
    notes: tuple[str, ...] = ()
    ipc_namespace: bool = False
    proc: bool = False
    reach: tuple[tuple[str, tuple[str, ...]], ...] = ()
    steps: tuple[tuple[Any, ...], ...] = field(default=(), compare=False, repr=False)

    def describe(self) -> dict[str, str]:
        """What the plan protects, for a server's handshake (``sandbox_info``)."""
        if not self.mode:
            return {"filesystem": f"off: {self.why_off}"}
        shm = f", private {_SHM} ({self.shm_mb} MiB)" if self.shm_mb else ""
        hidden = ", ".join(path for path, _ in self.hidden) or "none"
        if self.notes:
            hidden += f" (not hidden: {'; '.join(self.notes)})"
        return {
            "filesystem": f"read-only except the workdir{shm} ({self.mode})",
            "hidden": hidden,
            "devices": ", ".join(self.devices) or "none",
        }


def plan_filesystem(
    workdir: str,
    hidden: tuple[str, ...] = (),
    *,
    enabled: bool = True,
    hide_secrets: bool = True,
    devices: tuple[str, ...] = DEVICES,
    shm_mb: int = 64,
    reach: tuple[tuple[str, tuple[str, ...]], ...] = (),
) -> FilesystemPlan:
    """Plan the isolation of children that work in ``workdir`` (in the server, once).

    Args:
        workdir: the children's working directory, the only writable place.
        hidden: paths to cover; missing ones are skipped, and one that contains the workdir
            is left visible (both noted in :meth:`FilesystemPlan.describe`).
        enabled: ``False`` plans nothing.
        hide_secrets: also hide :data:`SECRET_PATHS` under the server user's home.
        devices: glob patterns of the device nodes that stay openable.
        shm_mb: size of the private ``/dev/shm``.
    """
    if not enabled:
        return FilesystemPlan("", why_off="not asked")
    mode, why_off, use_setattr = _host_support()
    if not mode:
        return FilesystemPlan("", why_off=why_off)
    _warm_up()
    workdir = os.path.realpath(workdir)
    wanted = [*hidden, *(_secret_paths() if hide_secrets else ())]
    covered: dict[str, bool] = {}
    notes = []
    for path in wanted:
        real = os.path.realpath(os.path.expanduser(path))
        if not os.path.lexists(real):
            continue
        if _contains(real, workdir):
            notes.append(f"{real} contains the workdir")
            continue
        covered.setdefault(real, os.path.isdir(real))
    # A path under another hidden one is already covered (and would have no mount point).
    kept = tuple(
        (path, is_dir)
        for path, is_dir in sorted(covered.items())
        if not any(other != path and _contains(other, path) for other in covered)
    )
    usable_devices = tuple(
        path
        for path in _device_nodes(devices)
        if not any(_contains(hidden_path, path) for hidden_path, _ in kept)
    )
    plan = FilesystemPlan(
        mode,
        workdir=workdir,
        hidden=kept,
        devices=usable_devices,
        shm_mb=shm_mb if os.path.isdir(_SHM) and not _contains(_SHM, workdir) else 0,
        use_setattr=use_setattr,
        make_private=_propagating_mounts(),
        notes=tuple(notes),
        reach=tuple((folder, tuple(paths)) for folder, paths in reach),
    )
    return dataclasses.replace(plan, steps=_steps(plan))


def with_namespaces(plan: FilesystemPlan, *, ipc: bool, proc: bool) -> FilesystemPlan:
    """``plan`` that also unshares an IPC namespace and/or mounts a fresh ``/proc``."""
    if not plan.mode:
        return plan
    plan = dataclasses.replace(plan, ipc_namespace=ipc, proc=proc)
    return dataclasses.replace(plan, steps=_steps(plan))


def apply_filesystem(plan: FilesystemPlan) -> None:
    """Enter a private mount namespace laid out as ``plan`` says (in the child; then ``chdir``).

    Raises:
        OSError: a step failed; its message names the step.
    """
    if not plan.mode:
        return
    libc = _libc()
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
    for kind, *args, what in plan.steps or _steps(plan):
        if kind == "mount":
            _check(libc.mount(*args), what)
        elif kind == "mkdirs":
            _mkdirs(*args)
        elif kind == "setattr":
            _check(libc.syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, *args), what)
        else:  # kernels before 5.12: remount each mount point read-only
            _remount_all_read_only()
            for path in (plan.workdir, _SHM) if plan.shm_mb else (plan.workdir,):
                _remount(path, _current_flags(path) & ~MS_RDONLY | MS_NOSUID | MS_NODEV)
            for device in plan.devices:
                _remount(device, _current_flags(device) & ~MS_NODEV)


def _steps(plan: FilesystemPlan) -> tuple[tuple[Any, ...], ...]:
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
        steps.append(mount("tmpfs", _SHM, "tmpfs", MS_NOSUID | MS_NODEV, options))
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
            steps.append(("mkdirs", plan.workdir, target, f"mkdir {target}"))
            steps.append(mount(path, target, None, MS_BIND | MS_REC))
        steps.append(mount(plan.workdir, folder, None, MS_MOVE))
    steps.append(mount(plan.workdir, plan.workdir, None, MS_BIND))
    steps.extend(mount(device, device, None, MS_BIND) for device in plan.devices)
    if not plan.use_setattr:
        return (*steps, ("remount", "remount read-only"))
    everything = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
    steps.append(setattr("/", everything, 0, recursive=True))
    for path in (plan.workdir, _SHM) if plan.shm_mb else (plan.workdir,):
        steps.append(setattr(path, 0, MOUNT_ATTR_RDONLY, recursive=False))
    steps.extend(setattr(device, 0, MOUNT_ATTR_NODEV, recursive=False) for device in plan.devices)
    return tuple(steps)


# ---------------------------------------------------------------------------------------------


def filesystem_mode() -> str:
    """``"mount namespace"``, ``"user namespace"`` or ``""``: how children of this process
    get their filesystem isolation here (found once, see :func:`plan_filesystem`)."""
    return _host_support()[0]


@functools.cache
def _host_support() -> tuple[str, str, bool]:
    """``(mode, why_off, use_setattr)``: what this process may do, found by trying it once.

    A forked child goes through the real sequence on a scratch directory, first as a plain
    mount namespace, then through a user namespace; its exit code says which worked.
    """
    libc = _libc()
    if libc is None:
        return "", "needs Linux mount namespaces", True
    scratch = tempfile.mkdtemp(prefix="evoforge-probe-")
    for name in ("work", "hidden"):
        os.mkdir(os.path.join(scratch, name))
    errors_r, errors_w = os.pipe()
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 1
            try:
                os.close(errors_r)
                code = _probe_child(scratch, errors_w)
            finally:
                os._exit(code)
        os.close(errors_w)
        errors_w = -1
        with os.fdopen(errors_r, "rb") as reader:
            errors_r = -1
            report = reader.read().decode(errors="replace").strip()
        _, status = os.waitpid(pid, 0)
    finally:
        for fd in (errors_r, errors_w):
            if fd >= 0:
                os.close(fd)
        for folder in ("work", "hidden", ""):
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(scratch, folder))
    code = os.waitstatus_to_exitcode(status)
    if code in (10, 11, 20, 21):
        return _MODES[code // 10 - 1], "", code % 10 == 0
    return "", report or f"the probe exited with {code}", True


def _probe_child(scratch: str, errors_w: int) -> int:
    """In a throwaway child: try each mode; exit 10/11 (mount ns), 20/21 (user ns), 1 (none).

    The second digit is 0 when ``mount_setattr`` works, 1 when the remount fallback is needed.
    """
    failures = []
    for tens, mode in enumerate(_MODES, start=1):
        if mode == "mount namespace" and not _has_sys_admin():
            failures.append(f"{mode}: no CAP_SYS_ADMIN")
            continue
        for use_setattr in (True, False):
            plan = FilesystemPlan(  # the same kinds of mounts a child makes
                mode,
                workdir=os.path.join(scratch, "work"),
                hidden=((os.path.join(scratch, "hidden"), True),),
                devices=_device_nodes(("/dev/null",)),
                shm_mb=1 if os.path.isdir(_SHM) else 0,
                use_setattr=use_setattr,
            )
            pid = os.fork()
            if pid == 0:
                try:
                    apply_filesystem(plan)
                    os._exit(0)
                except OSError as exc:
                    os.write(errors_w, f"{mode}: {exc.strerror or exc}; ".encode())
                    os._exit(1 if getattr(exc, "errno", 0) != 38 else 2)  # 38: ENOSYS
                finally:
                    os._exit(1)
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            if code == 0:
                return tens * 10 + (0 if use_setattr else 1)
            if code != 2:  # only a missing mount_setattr is worth the fallback
                break
    if failures:
        os.write(errors_w, "; ".join(failures).encode())
    return 1


@functools.cache
def namespace_support() -> tuple[str, str]:
    """``(why no PID namespace, why no IPC namespace)``; "" where this process may make one.

    Found once, by trying in a throwaway child: a PID namespace needs ``CAP_SYS_ADMIN`` here
    (the server makes one for its candidates and forks each into it with ``setns``), and the
    child must be able to mount a ``proc`` for it; an IPC namespace is unshared by the child
    with its mount namespace (as root, or inside its user namespace).
    """
    libc = _libc()
    if libc is None:
        return "needs Linux namespaces", "needs Linux namespaces"
    if not _has_sys_admin():
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


def _warm_up() -> None:
    """Resolve the libc functions a child calls, here: in a child each lookup would be paid
    anew (about 0.3 ms in all), because what a child caches dies with it."""
    libc = _libc()
    for name in ("unshare", "mount", "syscall", "prctl", "setns"):
        getattr(libc, name)
    libc.syscall.restype = ctypes.c_long


def _propagating_mounts() -> bool:
    """Whether a mount of this namespace is shared or a slave (propagation would cross)."""
    try:
        with open("/proc/self/mountinfo", "rb") as f:
            text = f.read()
    except OSError:
        return True
    return b" shared:" in text or b" master:" in text


def _has_sys_admin() -> bool:
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"CapEff:"):
                    return bool(int(line.split()[1], 16) >> 21 & 1)
    except OSError:
        pass
    return os.geteuid() == 0


def _secret_paths() -> list[str]:
    try:
        home = pwd.getpwuid(os.geteuid()).pw_dir
    except KeyError:
        return []
    return [os.path.join(home, name) for name in SECRET_PATHS]


@functools.cache
def _device_nodes(patterns: tuple[str, ...]) -> tuple[str, ...]:
    found = set()
    for pattern in patterns:
        for path in glob.glob(pattern):
            with contextlib.suppress(OSError):
                mode = os.stat(path).st_mode
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                    found.add(os.path.realpath(path))
    return tuple(sorted(found))


def _contains(outer: str, inner: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    _check(
        _libc().mount(
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
