"""Filesystem isolation of a sandboxed child: what is bound where, planned once in the server.

Planned once in the server (:func:`plan_filesystem`, which also finds out once per process
what this host allows), applied in each child before its request arrives
(:func:`~evoforge.evaluators.sandbox._mounts.apply_filesystem`). In the child's own mount
namespace (mounts made private, so nothing propagates back to the host):

- every mount is read-only, ``nosuid`` and ``nodev`` (``mount_setattr`` with ``AT_RECURSIVE``;
  on kernels before 5.12, each mount point of ``/proc/self/mountinfo`` is remounted);
- the workdir is a fresh ``tmpfs`` of ``disk_mb`` (the candidate's disk quota: writing more
  fails with ``ENOSPC``; its pages count against the candidate's memory cgroup, and it is gone
  with the candidate), or without a quota the host's directory bind-mounted on itself; either
  way the only writable place on disk (it is also ``HOME`` and ``TMPDIR``; ``/tmp`` and
  ``/var/tmp`` are read-only);
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
import dataclasses
import functools
import glob
import os
import pwd
import stat
import tempfile
from dataclasses import dataclass, field
from typing import Any

from evoforge.evaluators.sandbox._caps import has_sys_admin
from evoforge.evaluators.sandbox._host import load_libc
from evoforge.evaluators.sandbox._mounts import (
    SHM,
    apply_filesystem,
    compile_steps,
    resolve_functions,
)

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

COVERED = ("/home", "/root", "/srv", "/mnt", "/media", "/opt", "/var")
"""Folders of people's and services' data (home folders, project checkouts, other runs'
archives, service state), each covered by an empty ``tmpfs`` in which only what candidates
import (the Python installation, a venv, the project's packages: ``keep``) is bound back at
its own path. One that holds the workdir stays visible (noted)."""

_MODES = ("mount namespace", "user namespace")


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
        disk_mb: size of the workdir's ``tmpfs`` (0: the host's directory, bound).
        owner: ``(uid, gid)`` that owns the workdir's ``tmpfs`` (the candidates' user).
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
    disk_mb: int = 0
    owner: tuple[int, int] | None = None
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
        shm = f", private {SHM} ({self.shm_mb} MiB)" if self.shm_mb else ""
        if self.disk_mb:
            shm += f", disk quota {self.disk_mb} MiB (the workdir is a private tmpfs)"
        hidden = ", ".join(path for path, _ in self.hidden) or "none"
        if self.notes:
            hidden += f" (not hidden: {'; '.join(self.notes)})"
        kept = sorted({path for _, paths in self.reach for path in paths})
        covered = ", ".join(folder for folder, _ in self.reach) or "none"
        return {
            "filesystem": f"read-only except the workdir{shm} ({self.mode})",
            "hidden": hidden,
            "covered": f"{covered} (empty but for: {', '.join(kept) or 'nothing'})",
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
    disk_mb: int = 0,
    owner: tuple[int, int] | None = None,
    cover: tuple[str, ...] = (),
    keep: tuple[str, ...] = (),
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
        disk_mb: the disk quota: the workdir becomes a private ``tmpfs`` of this size (0: none).
        owner: who owns that ``tmpfs`` (the candidates' user; None: this process's).
        cover: folders to cover with an empty ``tmpfs`` (:data:`COVERED`), binding back the
            paths of ``keep`` inside them.
        keep: what candidates must still read under ``cover`` (real paths).
    """
    if not enabled:
        return FilesystemPlan("", why_off="not asked")
    mode, why_off, use_setattr = _host_support()
    if not mode:
        return FilesystemPlan("", why_off=why_off)
    resolve_functions()
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
    reach, covered_notes = _cover(cover, keep, reach, workdir, kept)
    notes.extend(covered_notes)
    plan = FilesystemPlan(
        mode,
        workdir=workdir,
        hidden=kept,
        devices=usable_devices,
        shm_mb=shm_mb if os.path.isdir(SHM) and not _contains(SHM, workdir) else 0,
        disk_mb=disk_mb,
        owner=owner or (os.geteuid(), os.getegid()),
        use_setattr=use_setattr,
        make_private=_propagating_mounts(),
        notes=tuple(notes),
        reach=reach,
    )
    return dataclasses.replace(plan, steps=compile_steps(plan))


def _cover(
    cover: tuple[str, ...],
    keep: tuple[str, ...],
    reach: tuple[tuple[str, tuple[str, ...]], ...],
    workdir: str,
    hidden: tuple[tuple[str, bool], ...],
) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], list[str]]:
    """``reach`` with the ``cover`` folders added (each with the ``keep`` paths inside it);
    a reach folder inside a covered one is merged into it (the cover's folders are
    traversable). Also what could not be covered, and why."""
    notes = []
    folders: dict[str, set[str]] = {}
    for path in cover:
        real = os.path.realpath(path)
        if not os.path.isdir(real) or real in folders:
            continue
        if _contains(real, workdir):
            notes.append(f"{real} holds the workdir")
        elif any(_contains(os.path.realpath(k), real) for k in keep):
            notes.append(f"{real} is needed whole")
        elif not any(_contains(h, real) for h, _ in hidden):
            folders[real] = set()
    for folder, paths in reach:
        outer = next((f for f in folders if _contains(f, folder)), None)
        if outer is None:
            folders.setdefault(folder, set()).update(paths)
        else:
            folders[outer].update(paths)
    for path in keep:
        real = os.path.realpath(path)
        for folder in folders:
            if _contains(folder, real) and real != folder and os.path.exists(real):
                folders[folder].add(real)
    # A folder covered whole needs no bind of what is inside another bound one.
    merged = []
    for folder in sorted(folders):
        inside = folders[folder]
        kept = sorted(p for p in inside if not any(o != p and _contains(o, p) for o in inside))
        merged.append((folder, tuple(kept)))
    return tuple(merged), notes


def with_namespaces(plan: FilesystemPlan, *, ipc: bool, proc: bool) -> FilesystemPlan:
    """``plan`` that also unshares an IPC namespace and/or mounts a fresh ``/proc``."""
    if not plan.mode:
        return plan
    plan = dataclasses.replace(plan, ipc_namespace=ipc, proc=proc)
    return dataclasses.replace(plan, steps=compile_steps(plan))


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
    libc = load_libc()
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
        if mode == "mount namespace" and not has_sys_admin():
            failures.append(f"{mode}: no CAP_SYS_ADMIN")
            continue
        for use_setattr in (True, False):
            plan = FilesystemPlan(  # the same kinds of mounts a child makes
                mode,
                workdir=os.path.join(scratch, "work"),
                hidden=((os.path.join(scratch, "hidden"), True),),
                devices=_device_nodes(("/dev/null",)),
                shm_mb=1 if os.path.isdir(SHM) else 0,
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


def _propagating_mounts() -> bool:
    """Whether a mount of this namespace is shared or a slave (propagation would cross)."""
    try:
        with open("/proc/self/mountinfo", "rb") as f:
            text = f.read()
    except OSError:
        return True
    return b" shared:" in text or b" master:" in text


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
