"""Does CUDA work inside the real sandbox? One script for a machine with an NVIDIA GPU.

Runs, in :class:`evoforge.evaluators.sandbox.Sandbox` as the ``cuda`` evaluator would (a GPU
request: NVIDIA nodes, ``/sys``, the persistence daemon's socket, ``AF_UNIX`` and the NUMA
calls; :mod:`evoforge.evaluators.sandbox._gpu`), a candidate that calls
``torch.cuda.device_count()`` and launches a tiny kernel, and prints what it had: which of
the driver's paths it could see, which device nodes it could open, whether ``AF_UNIX`` and
``get_mempolicy`` worked, and the result or the error. Then the same with the filesystem
isolation off, so a failure says whether the minimal root or the rest is to blame.

    python bench/cuda_sandbox_probe.py          # prints "device unavailable" without a GPU

``bench/gpu_check.sh`` runs it, then the GPU tests, on a lent GPU machine. On an H200 (driver
580) it found the two causes of error 304 that ``_gpu`` now answers: the driver's
``socket(AF_UNIX, SOCK_SEQPACKET)`` refused without filesystem isolation, and its threads'
names (``/proc/self/task/<tid>/comm``) unwritable in a read-only ``/proc``.

Exits 0 when CUDA worked in the sandbox or no GPU is present, 1 when it failed in it.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import socket
import sys
import tempfile

import evoforge.evaluators.sandbox as sb
from evoforge.evaluators.sandbox._gpu import GPU_PATHS, NVIDIA_NODES
from evoforge.evaluators.sandbox._host import harden_server

CHECKED_PATHS = (*GPU_PATHS, "/proc/driver/nvidia", "/sys/bus/pci/devices", "/dev/shm")


def candidate() -> tuple[dict, bytes]:
    """The candidate: what it sees, then CUDA."""
    seen: dict[str, object] = {p: os.path.exists(p) for p in CHECKED_PATHS}
    for pattern in NVIDIA_NODES:
        for node in sorted(glob.glob(pattern)):
            try:
                os.close(os.open(node, os.O_RDWR))
                seen[node] = "opens"
            except OSError as exc:
                seen[node] = exc.strerror
    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
        seen["AF_UNIX"] = "allowed"
    except OSError as exc:
        seen["AF_UNIX"] = exc.strerror
    libc = ctypes.CDLL(None, use_errno=True)
    mode = ctypes.c_int(0)
    ok = libc.syscall(239, ctypes.byref(mode), None, 0, None, 0) == 0  # get_mempolicy, x86-64
    seen["get_mempolicy"] = "allowed" if ok else os.strerror(ctypes.get_errno())
    try:
        import torch

        seen["device_count"] = torch.cuda.device_count()
        x = torch.arange(1024, device="cuda", dtype=torch.float32)
        seen["kernel"] = float((x * 2).sum().item())  # 1047552.0 when it ran
    except Exception as exc:  # the point of the probe: say what failed
        seen["error"] = f"{type(exc).__name__}: {exc}"
    return {"status": "ok"}, json.dumps(seen).encode()


def run(filesystem: bool) -> dict:
    workdir = tempfile.mkdtemp(prefix="evoforge-cuda-probe-")
    box = sb.Sandbox(lambda _: candidate(), sb.Isolation(filesystem=filesystem), workdir=workdir)
    try:
        result = box.run(b"", sb.Limits(timeout_s=120, memory_mb=None))
        outcome = json.loads(result.payload or b"{}")
        outcome["status"], outcome["sandbox_error"] = result.status.value, result.error
        outcome["stderr"] = result.stderr_tail[-600:]
        outcome["protections"] = {k: box.protections.get(k, "") for k in ("filesystem", "gpu")}
        return outcome
    finally:
        box.close()


def main() -> int:
    if not glob.glob("/dev/nvidia[0-9]*") or not os.path.isdir("/proc/driver/nvidia"):
        print("device unavailable: no NVIDIA GPU on this machine (no /dev/nvidia<N>)")
        return 0
    harden_server()
    results = {"sandbox": run(filesystem=True), "no filesystem isolation": run(filesystem=False)}
    for name, outcome in results.items():
        print(f"--- {name}")
        for key, value in outcome.items():
            print(f"  {key}: {value}")
    worked = results["sandbox"].get("kernel") == 1047552.0
    print("CUDA in the sandbox:", "works" if worked else "FAILED")
    return 0 if worked else 1


if __name__ == "__main__":
    sys.exit(main())
