"""What a sandboxed run is given (a job, limits, isolation) and what it returns."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evoforge.archive import Status
from evoforge.evaluators.sandbox._mount_plan import DEVICES

Job = Callable[[bytes], tuple[dict[str, Any], bytes]]
"""Called in the child with the request bytes; returns ``(header, payload)``, where ``header``
is a JSON-able dict whose ``"status"`` is one of ok / syntax_error / compile_error /
runtime_error / memory_limit (the server decides timeout and crashed itself), optionally with
``"error"`` and ``"traceback"`` texts."""


class SandboxError(RuntimeError):
    """The sandbox itself failed (a worker would not start or restart), not the candidate."""


DEFAULT_DISK_MB = 1024
"""A candidate's disk quota when nothing else says (``Isolation.disk_mb``)."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one run. Sizes in MiB; ``None`` means no limit of that kind."""

    timeout_s: float
    memory_mb: int | None = 2048
    file_size_mb: int = 64
    max_procs: int = 512
    max_files: int = 1024
    result_mb: int = 16
    tail_chars: int = 4000

    @property
    def cpu_s(self) -> int:
        """The CPU-time soft limit: SIGXCPU at this many seconds, SIGKILL one second later."""
        return math.ceil(self.timeout_s) + 1


@dataclass(frozen=True)
class Isolation:
    """Who the child runs as and what it can reach, beyond what every run gets.

    Attributes:
        user: ``(uid, gid)`` to switch to (needs root; see
            :func:`~evoforge.evaluators.sandbox._host.resolve_user`), or ``None`` to stay the
            server's own user.
        new_network: unshare a network namespace in each child. It costs about 1 ms per run
            here, so servers normally unshare once for all their children instead
            (:func:`~evoforge.evaluators.sandbox._host.enter_network_namespace` at start-up).
        env: extra environment variables for the child.
        filesystem: run the child in a private mount namespace whose root holds only what
            it needs (the system, what the server imports, ``keep``), read-only, and where only
            its workdir, a private ``/tmp`` and ``/dev/shm`` can be written
            (see :mod:`evoforge.evaluators.sandbox._mount_plan`).
        hidden_paths: files and folders the child must not read (e.g. the problem's folder):
            each is covered by an empty read-only mount. Needs ``filesystem``.
        hide_secrets: also hide the server user's credential files
            (:data:`~evoforge.evaluators.sandbox._mount_plan.SECRET_PATHS`, those that exist).
        devices: glob patterns of the device nodes the child may open
            (:data:`~evoforge.evaluators.sandbox._mount_plan.DEVICES` by default: the usual
            character devices and accelerators).
        shm_mb: size of the child's private ``/dev/shm``.
        disk_mb: the child's disk quota: its workdir (also its ``HOME`` and ``TMPDIR``) and
            its private ``/tmp`` share a ``tmpfs`` of this size, empty at its start and gone
            with it; writing more fails with ``ENOSPC`` and the run ends ``disk_limit``. Its
            pages count against the memory cgroup too. 0: the workdir is the host's directory
            (bound), unlimited but by ``RLIMIT_FSIZE`` per file. Needs ``filesystem``.
        workdir_base: the workdir's files are the run's input (a repository's copy), not an
            empty folder: with ``disk_mb`` it is an overlay of the host's folder (read-only,
            below) and the quota's ``tmpfs`` (above), so the run reads the files, what it
            writes counts against the quota, and the host's folder is never written. Where
            overlayfs cannot be mounted, the host's folder is bound as it is, without a quota
            (the handshake says why).
        keep: more paths the child's root holds, read-only (a problem's data; what the
            server imports, and the folders of the shared libraries it has loaded, are there
            anyway).
        namespaces: run children in a PID namespace of the server's candidates (with their
            own read-only ``/proc``; emptied after each candidate) and give each its own IPC
            namespace (System V objects and POSIX queues die with it), where the host allows
            (needs ``filesystem``; a PID namespace needs root).
        unix_sockets: allow UNIX-domain sockets; by default a seccomp filter refuses them, so
            no socket file outside the workdir (a host service's) can be reached
            (:mod:`evoforge.evaluators.sandbox._seccomp`).
        cgroup: limit and account the memory of the child's whole process tree in a cgroup,
            where the host allows (:mod:`evoforge.evaluators.sandbox._cgroup`).
        reach: folders the child's user may not traverse and what in them it must import
            (:func:`candidate_user` computes it): those paths are bound into its root, whose
            own folders are traversable.
        gpu: give the child the GPU (the NVIDIA nodes and what the driver needs,
            :mod:`~evoforge.evaluators.sandbox._gpu`); None: when an NVIDIA node is among
            ``devices`` and ``CUDA_VISIBLE_DEVICES`` does not hide every GPU.
    """

    user: tuple[int, int] | None = None
    new_network: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    filesystem: bool = True
    hidden_paths: tuple[str, ...] = ()
    hide_secrets: bool = True
    devices: tuple[str, ...] = DEVICES
    shm_mb: int = 64
    disk_mb: int = DEFAULT_DISK_MB
    workdir_base: bool = False
    keep: tuple[str, ...] = ()
    namespaces: bool = True
    unix_sockets: bool = False
    cgroup: bool = True
    reach: tuple[tuple[str, tuple[str, ...]], ...] = ()
    gpu: bool | None = None


@dataclass
class SandboxRun:
    """What happened in one run. ``status`` is OK when the job returned a result."""

    status: Status
    error: str = ""
    header: dict[str, Any] = field(default_factory=dict)
    payload: bytes = b""
    stdout_tail: str = ""
    stderr_tail: str = ""
    eval_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_mb: float = 0.0
    stragglers: int = 0

    @property
    def artifacts(self) -> dict[str, str]:
        """Short texts for the archive and the next prompt; empty ones are left out."""
        texts = {
            "error": self.error,
            "traceback": self.header.get("traceback"),
            "stdout_tail": self.stdout_tail,
            "stderr_tail": self.stderr_tail,
        }
        return {k: v for k, v in texts.items() if isinstance(v, str) and v}

    @property
    def timings(self) -> dict[str, float]:
        return {"eval_s": self.eval_s, "cpu_s": self.cpu_s, "max_rss_mb": self.max_rss_mb}
