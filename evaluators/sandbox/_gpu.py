"""What the NVIDIA driver needs in a candidate's sandbox, given only to GPU requests.

``cuInit`` (so ``torch.cuda.device_count()`` and every kernel launch) fails with error 304 ("OS
call failed") when one of its system calls fails, and it makes more of them than a CPU
candidate: after nvidia-container-toolkit's list of what a container gets, and the driver's
documented needs, a GPU request gets, besides the NVIDIA device nodes (``/dev/nvidiactl``,
``/dev/nvidia-uvm``, ``/dev/nvidia-uvm-tools``, ``/dev/nvidia<N>``, ``/dev/nvidia-modeset``,
``/dev/nvidia-caps/*``), which no other request gets:

- ``/sys``, read-only: the driver reads the GPUs' PCI topology and NUMA nodes
  (``/sys/bus/pci/devices/...``, ``/sys/devices/system/node``);
- ``/run/nvidia-persistenced`` (where it exists), read-only: the persistence daemon's socket,
  which the driver connects to;
- ``/proc/driver/nvidia``: part of every ``/proc`` mount, the candidate's own included;
- a writable ``/proc`` of its own: the driver names its threads (``pthread_setname_np`` writes
  ``/proc/self/task/<tid>/comm``), and ``cuInit`` fails with 304 when that write does (seen
  on an H200, driver 580). The system-wide parts stay read-only (:data:`PROC_READ_ONLY`,
  Docker's ``readonlyPaths`` plus ``/proc/driver``), so what the candidate can write is its
  own processes' files (names, ``oom_score_adj`` upwards, ...), as in any container;
- a writable ``/dev/shm`` (every candidate has a private one) and the driver's ``libcuda`` (in
  ``/usr/lib/...``, part of the root; found through ``/etc/ld.so.cache``);
- in the seccomp filter (:mod:`~evoforge.evaluators.sandbox._seccomp`): ``AF_UNIX`` sockets
  (the driver opens ``socket(AF_UNIX, SOCK_SEQPACKET)`` for the MPS daemon's
  ``/tmp/nvidia-mps/control`` in every ``cuInit`` and fails with 304 when the socket itself is
  refused, seen on an H200; ``/tmp`` is the candidate's own, so it finds no daemon there and
  goes on; it also talks to the persistence daemon over them; in the
  candidate's empty network namespace and minimal root, such a socket reaches only socket
  files bound in that root, i.e. the daemon's, and abstract sockets of that namespace, which
  holds no host service) and the NUMA policy calls (``mbind``, ``get_mempolicy``,
  ``set_mempolicy``, which the driver uses to place pinned memory; Docker refuses them without
  ``CAP_SYS_NICE``, a known cause of error 304 in containers). They concern the candidate's
  own memory only.

``~/.nv/ComputeCache`` (the JIT cache) lands in ``HOME``, the workdir: writable, and gone with
the run. ``bench/cuda_sandbox_probe.py`` checks all of this on a machine with a GPU.
"""

from __future__ import annotations

import fnmatch
import os

NVIDIA_NODES = ("/dev/nvidia*", "/dev/nvidia-caps/*")
"""Device nodes of the NVIDIA driver (glob patterns): given to GPU requests only."""

PROC_READ_ONLY = (
    "/proc/sys",
    "/proc/sysrq-trigger",
    "/proc/irq",
    "/proc/bus",
    "/proc/fs",
    "/proc/driver",
)
"""Parts of a GPU request's writable ``/proc`` bound read-only (where this machine has them):
sysctls, the magic SysRq key, interrupt affinities, buses, file systems' and drivers' knobs,
which uid 0 could otherwise write without any capability."""


def proc_read_only() -> tuple[str, ...]:
    """:data:`PROC_READ_ONLY` that exist here."""
    return tuple(path for path in PROC_READ_ONLY if os.path.lexists(path))


GPU_PATHS = ("/sys", "/run/nvidia-persistenced")
"""Bound read-only into a GPU request's root where they exist (see the module's notes)."""

HIDDEN_VALUES = ("", "-1", "none", "void", "NoDevFiles")
"""``CUDA_VISIBLE_DEVICES``/``NVIDIA_VISIBLE_DEVICES`` values that hide every GPU."""


def is_nvidia_node(path: str) -> bool:
    return any(fnmatch.fnmatch(path, pattern) for pattern in NVIDIA_NODES)


def gpu_requested(asked: bool | None, devices: tuple[str, ...]) -> bool:
    """Whether candidates get the GPU: ``asked`` when given (``Isolation.gpu``), else when an
    NVIDIA device node is among ``devices`` (real paths that exist) and this process's
    environment does not hide every GPU (the CPU targets of the kernel evaluators set
    ``CUDA_VISIBLE_DEVICES=""``; a GPU target sets it to the device it was given)."""
    if asked is not None:
        return asked
    if not any(is_nvidia_node(path) for path in devices):
        return False
    return not any(
        os.environ.get(name, "unset").strip() in HIDDEN_VALUES
        for name in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")
    )


def gpu_paths() -> tuple[str, ...]:
    """:data:`GPU_PATHS` that exist here."""
    return tuple(path for path in GPU_PATHS if os.path.exists(path))
