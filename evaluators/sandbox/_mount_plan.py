"""Filesystem isolation of a sandboxed child: what its root holds, planned once in the server.

Planned once in the server (:func:`plan_filesystem`, which also finds out once per process
what this host allows), applied in each child before its request arrives
(:func:`~evoforge.evaluators.sandbox._mounts.apply_filesystem`). The child gets a mount
namespace of its own (nothing propagates back to the host) whose root is a fresh ``tmpfs``,
not the host's ``/`` (:mod:`~evoforge.evaluators.sandbox._root` says what it holds and why):

- every mount is read-only, ``nosuid`` and ``nodev`` (``mount_setattr`` with ``AT_RECURSIVE``;
  on kernels before 5.12, each mount point of ``/proc/self/mountinfo`` is remounted) but
  ``/tmp``, the workdir and ``/dev/shm``;
- ``/tmp`` is a fresh ``tmpfs`` of ``disk_mb`` (the candidate's disk quota: writing more fails
  with ``ENOSPC``; its pages count against the candidate's memory cgroup, and it is gone with
  the candidate), and the workdir (also ``HOME`` and ``TMPDIR``) is a folder of it, so both
  share the quota; without a quota the workdir is the host's directory, bound as it is (a
  repository's copy), and ``/tmp`` a private ``tmpfs`` of :data:`TMP_MB`;
- ``/dev/shm`` is a fresh, size-capped ``tmpfs`` (``multiprocessing`` needs it);
- ``/dev`` holds only the device nodes allowed (``/dev/null``, ``/dev/zero``, ``/dev/full``,
  ``/dev/random``, ``/dev/urandom`` and accelerators; NVIDIA's only for GPU requests), each a
  bind of the host's node;
- hidden paths inside what is bound (the problem folder when the project's ``problems``
  package is imported from, credential files) are covered by an empty read-only ``tmpfs`` (a
  hidden file: by a device node that cannot be opened).

Root gets this with a plain mount namespace; another user through a user namespace of its own (uid
and gid mapped to themselves). Where neither is allowed (a container without ``CAP_SYS_ADMIN``, user
namespaces disabled), the plan says so and why, and children run without it. A child that then drops
every capability (:mod:`evoforge.evaluators.sandbox._caps`) cannot undo any of it: remounting,
unmounting and ``mount_setattr`` need ``CAP_SYS_ADMIN``, and in a user namespace of its own the
kernel locks the flags and mounts it inherited. The host's tree is detached after the pivot:
no path, ``..`` or descriptor of the child leads back to it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import glob
import os
import pwd
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from typing import Any

from evoforge.evaluators.sandbox._caps import has_sys_admin
from evoforge.evaluators.sandbox._gpu import gpu_paths, is_nvidia_node
from evoforge.evaluators.sandbox._host import load_libc
from evoforge.evaluators.sandbox._mounts import (
    SHM,
    apply_filesystem,
    compile_steps,
    resolve_functions,
)
from evoforge.evaluators.sandbox._root import RootLayout, plan_root, staging_point

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

COVERED = ("/home", "/root", "/srv", "/mnt", "/media", "/opt", "/var", "/tmp")
"""Folders of people's and services' data (home folders, project checkouts, other runs'
archives, service state, the host's temporary files): not in a candidate's root, but for
what it imports from them (the Python installation, a venv, the project's packages), bound
at its own path (``/tmp`` is the candidate's own)."""

TMP_MB = 256
"""Size of a candidate's private ``/tmp`` when it has no disk quota (``disk_mb`` 0)."""

_MODES = ("mount namespace", "user namespace")


@dataclass(frozen=True)
class FilesystemPlan:
    """What a child does to its mount namespace; ``mode`` is empty when it does nothing.

    Attributes:
        mode: ``"mount namespace"`` (root), ``"user namespace"`` (any user), or ``""``.
        why_off: when ``mode`` is empty, why (``"not asked"``, or what the host refused).
        workdir: the candidate's working directory (in its quota, or bound without one).
        hidden: ``(path, is_dir)`` pairs to cover (only those inside what is bound).
        devices: device nodes that stay openable.
        shm_mb: size of the private ``/dev/shm`` (0: none, it stays read-only).
        disk_mb: the quota: size of the ``tmpfs`` of ``/tmp`` and the workdir (0: the workdir
            is the host's directory, bound, and ``/tmp`` a private ``tmpfs`` of ``tmp_mb``).
        tmp_mb: size of the private ``/tmp`` without a quota.
        owner: ``(uid, gid)`` that owns the workdir (the candidates' user).
        use_setattr: ``mount_setattr`` works here (Linux >= 5.12); else remount each mount.
        make_private: the server's namespace has shared or slave mounts, so each child makes
            its copy private (about 0.1 ms; a server in a private namespace of its own,
            :func:`~evoforge.evaluators.sandbox._host.enter_private_mount_namespace`, saves it).
        notes: paths that were asked to be hidden and are not, with why.
        ipc_namespace: also unshare an IPC namespace (System V objects, POSIX queues).
        proc: mount a fresh ``/proc`` (the child runs in the candidates' PID namespace, so it
            shows that namespace only), read-only but for a GPU request's (:attr:`writable`);
            else the host's is bound read-only.
        root: what the minimal root holds (:mod:`~evoforge.evaluators.sandbox._root`).
        staging: the folder of the host's tree the root's ``tmpfs`` is built on.
        gpu: the candidates get the GPU (:mod:`~evoforge.evaluators.sandbox._gpu`).
        overlay: the workdir is an overlay of the host's folder (below, read-only) and the
            quota's ``tmpfs`` (above): its files are the run's input (``workdir_base``).
        overlay_off: why a ``workdir_base`` run has no overlay (and so no quota), or "".
    """

    mode: str
    why_off: str = ""
    workdir: str = ""
    hidden: tuple[tuple[str, bool], ...] = ()
    devices: tuple[str, ...] = ()
    shm_mb: int = 0
    disk_mb: int = 0
    tmp_mb: int = TMP_MB
    owner: tuple[int, int] | None = None
    use_setattr: bool = True
    make_private: bool = True
    notes: tuple[str, ...] = ()
    ipc_namespace: bool = False
    proc: bool = False
    root: RootLayout | None = None
    staging: str = "/tmp"
    gpu: bool = False
    overlay: bool = False
    overlay_off: str = ""
    steps: tuple[tuple[Any, ...], ...] = field(default=(), compare=False, repr=False)

    @property
    def writable(self) -> tuple[str, ...]:
        """Mount points that stay writable: ``/tmp``, the workdir when it is a mount of its
        own, ``/dev/shm``, and a GPU request's own ``/proc``: the NVIDIA driver names its
        threads (``pthread_setname_np`` writes ``/proc/self/task/<tid>/comm``) and ``cuInit``
        fails with error 304 when it cannot. Its system-wide parts stay read-only
        (:data:`~evoforge.evaluators.sandbox._gpu.PROC_READ_ONLY`), so what is writable is the
        candidate's own processes' files."""
        own_mount = (
            not self.disk_mb
            or self.overlay
            or not _contains("/tmp", self.workdir)
            or any(
                _contains(path, self.workdir) for path, _ in (self.root.binds if self.root else ())
            )
        )
        return (
            "/tmp",
            *((self.workdir,) if own_mount else ()),
            *((SHM,) if self.shm_mb else ()),
            *(("/proc",) if self.proc and self.gpu else ()),
        )

    def describe(self) -> dict[str, str]:
        """What the plan protects, for a server's handshake (``sandbox_info``)."""
        if not self.mode:
            gpu = {"gpu": "given: the host's /dev, AF_UNIX, NUMA calls"} if self.gpu else {}
            return {"filesystem": f"off: {self.why_off}", **gpu}
        shm = f", private {SHM} ({self.shm_mb} MiB)" if self.shm_mb else ""
        if self.overlay:
            shm += (
                f", disk quota {self.disk_mb} MiB (what is written in the workdir, an overlay "
                "of the host's folder, and a private /tmp, one tmpfs)"
            )
        elif self.disk_mb:
            shm += f", disk quota {self.disk_mb} MiB (the workdir and a private /tmp, one tmpfs)"
        else:
            shm += f", a private /tmp ({self.tmp_mb} MiB; the workdir is the host's folder"
            shm += f", without a quota: {self.overlay_off})" if self.overlay_off else ")"
        hidden = ", ".join(path for path, _ in self.hidden) or "none inside what is visible"
        if self.notes:
            hidden += f" (not hidden: {'; '.join(self.notes)})"
        visible = ", ".join(self.root.visible()) if self.root else ""
        if self.root and self.root.skipped:
            visible += f" (left out, holding other data: {', '.join(self.root.skipped)})"
        return {
            "filesystem": f"a minimal root, read-only except the workdir{shm} ({self.mode})",
            "visible": visible + "; /dev (the devices below), /proc, /tmp (private)",
            "hidden": hidden,
            "devices": ", ".join(self.devices) or "none",
            "gpu": "given: " + ", ".join(("NVIDIA nodes", *gpu_paths(), "AF_UNIX, NUMA calls"))
            if self.gpu
            else "not requested",
        }


def plan_filesystem(
    workdir: str,
    hidden: tuple[str, ...] = (),
    *,
    enabled: bool = True,
    hide_secrets: bool = True,
    devices: tuple[str, ...] = DEVICES,
    shm_mb: int = 64,
    disk_mb: int = 0,
    workdir_base: bool = False,
    owner: tuple[int, int] | None = None,
    keep: tuple[str, ...] = (),
    gpu: bool | None = None,
) -> FilesystemPlan:
    """Plan the isolation of children that work in ``workdir`` (in the server, once).

    Args:
        workdir: the children's working directory, the only writable place but ``/tmp``.
        hidden: paths to cover; those outside what the root holds are not there anyway, and
            one that contains the workdir is left visible (noted in
            :meth:`FilesystemPlan.describe`).
        enabled: ``False`` plans nothing.
        hide_secrets: also hide :data:`SECRET_PATHS` under the server user's home.
        devices: glob patterns of the device nodes that stay openable.
        shm_mb: size of the private ``/dev/shm``.
        disk_mb: the disk quota of ``/tmp`` and the workdir together (0: none, the workdir is
            the host's directory).
        workdir_base: the workdir holds the run's input: with ``disk_mb``, an overlay over
            the host's folder where overlayfs mounts here (else bound, without a quota).
        owner: who owns the workdir (the candidates' user; None: this process's).
        keep: what candidates must read besides the system (what the server imports, the
            libraries it loaded, a problem's data); bound read-only at their own paths.
        gpu: give the candidates the GPU (None: when an NVIDIA node is allowed and not hidden
            by ``CUDA_VISIBLE_DEVICES``; :func:`~evoforge.evaluators.sandbox._gpu.gpu_requested`).
    """
    from evoforge.evaluators.sandbox._gpu import gpu_requested

    nodes = _device_nodes(devices)
    wants_gpu = gpu_requested(gpu, nodes)
    if not enabled:  # the host's /dev as it is; a GPU request still gets its system calls
        return FilesystemPlan("", why_off="not asked", gpu=wants_gpu)
    mode, why_off, use_setattr = _host_support()
    if not mode:
        return FilesystemPlan("", why_off=why_off, gpu=wants_gpu)
    resolve_functions()
    workdir = os.path.realpath(workdir)
    owner = owner or (os.geteuid(), os.getegid())
    root = plan_root(workdir, keep, gpu_paths() if wants_gpu else (), owner)
    bound = root.visible()
    wanted = [*hidden, *(_secret_paths() if hide_secrets else ())]
    covered: dict[str, bool] = {}
    for path in wanted:
        real = os.path.realpath(os.path.expanduser(path))
        if not os.path.lexists(real) or not any(_contains(b, real) for b in bound):
            continue  # not in the root at all
        covered.setdefault(real, os.path.isdir(real))
    # A path under another hidden one is already covered (and would have no mount point).
    kept = tuple(
        (path, is_dir)
        for path, is_dir in sorted(covered.items())
        if not any(other != path and _contains(other, path) for other in covered)
    )
    usable_devices = tuple(
        path
        for path in nodes
        if (wants_gpu or not is_nvidia_node(path))
        and not any(_contains(hidden_path, path) for hidden_path, _ in kept)
    )
    plan = FilesystemPlan(
        mode,
        workdir=workdir,
        hidden=kept,
        devices=usable_devices,
        shm_mb=shm_mb if os.path.isdir(SHM) else 0,
        disk_mb=disk_mb,
        owner=owner,
        use_setattr=use_setattr,
        make_private=_propagating_mounts(),
        root=root,
        staging=staging_point(workdir),
        gpu=wants_gpu,
    )
    if workdir_base and disk_mb:
        why = _overlay_support(mode, use_setattr)
        plan = dataclasses.replace(
            plan, overlay=not why, overlay_off=why, disk_mb=0 if why else disk_mb
        )
    return dataclasses.replace(plan, steps=compile_steps(plan))


@functools.cache
def _overlay_support(mode: str, use_setattr: bool) -> str:
    """ "" when a child here can make its workdir an overlay (``workdir_base``), else why not:
    found once, by a throwaway child that makes the same mounts over a scratch folder
    (overlayfs in a user namespace needs Linux 5.11, and a kernel built with it)."""
    scratch = tempfile.mkdtemp(prefix="evoforge-overlay-probe-")
    work = os.path.join(scratch, "work")
    os.mkdir(work)
    plan = FilesystemPlan(
        mode,
        workdir=work,
        disk_mb=1,
        use_setattr=use_setattr,
        root=plan_root(work, ()),
        staging=staging_point(work),
        overlay=True,
    )
    plan = dataclasses.replace(plan, steps=compile_steps(plan))
    errors_r, errors_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            os.close(errors_r)
            apply_filesystem(plan)
            with open(os.path.join(work, "written"), "w") as f:  # through the overlay
                f.write("x")
            os._exit(0)
        except OSError as exc:
            os.write(errors_w, f"overlayfs: {exc.strerror or exc}".encode())
        finally:
            os._exit(1)
    os.close(errors_w)
    with os.fdopen(errors_r, "rb") as reader:
        report = reader.read().decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    written = os.path.exists(os.path.join(work, "written"))  # would mean the host was written
    shutil.rmtree(scratch, ignore_errors=True)
    if os.waitstatus_to_exitcode(status) != 0:
        return report or "overlayfs: the probe failed"
    return "overlayfs: a write reached the host's folder" if written else ""


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
    for name in ("work", "data", "data/hidden"):
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
        for folder in ("work", "data/hidden", "data", ""):
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
            work = os.path.join(scratch, "work")
            plan = FilesystemPlan(  # the same kinds of mounts a child makes
                mode,
                workdir=work,
                hidden=((os.path.join(scratch, "data", "hidden"), True),),
                devices=_device_nodes(("/dev/null",)),
                shm_mb=1 if os.path.isdir(SHM) else 0,
                disk_mb=1,
                use_setattr=use_setattr,
                root=plan_root(work, (os.path.join(scratch, "data"),)),
                staging=staging_point(work),
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
