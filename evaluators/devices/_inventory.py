"""What accelerators this host has: :func:`inventory` and the :class:`Device` records it lists.

Detection never imports torch, jax or pyobjc into this process: the controller stays light and
never grabs a device itself. CUDA GPUs come from ``nvidia-smi`` (or ``/proc/driver/nvidia``),
JAX's TPU or GPU devices from a short ``python -c`` subprocess (only when a TPU runtime or a JAX
GPU plugin is installed: without one, JAX can only see the CPU), Metal from pyobjc on macOS,
Neuron devices from ``/dev/neuron*``. Every kind that has no device gets a note saying why, so
``evoforge devices`` and the evaluators can say exactly what is missing.
"""

from __future__ import annotations

import collections
import contextlib
import glob
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from evoforge.evaluators.devices._fingerprint import cpu_fingerprint

KINDS = ("cpu", "cuda", "tpu", "jax-gpu", "metal", "neuron")
"""Device kinds the inventory knows; evaluators claim devices by these names."""

NVIDIA_PROC_DIR = "/proc/driver/nvidia/gpus"
_NVIDIA_SMI_TIMEOUT_S = 20.0
_JAX_PROBE_TIMEOUT_S = 90.0
_JAX_GPU_PLUGINS = ("jax-cuda12-plugin", "jax-cuda13-plugin", "jax-rocm60-plugin")
_TPU_RUNTIMES = ("libtpu", "libtpu-nightly")
_SMI_FIELDS = ("index", "uuid", "name", "driver_version", "memory.total", "pci.bus_id")


@dataclass(frozen=True)
class Device:
    """One device this host can run candidates on.

    Attributes:
        kind: one of :data:`KINDS`.
        index: position among devices of its kind (for CUDA, ``nvidia-smi``'s index).
        name: model name, e.g. ``"NVIDIA H100 80GB HBM3"``.
        details: driver, memory, compute capability, uuid, ... (strings).
    """

    kind: str
    index: int
    name: str
    details: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """A host-wide identity for locks: the uuid where there is one, else the index."""
        ident = self.details.get("uuid") or str(self.index)
        return f"{self.kind}-{re.sub(r'[^A-Za-z0-9_.-]', '_', ident)}"


@dataclass(frozen=True)
class Inventory:
    """The devices of this host, with a note per kind on why none (or what is missing)."""

    cpu_cores: int
    devices: tuple[Device, ...]
    notes: Mapping[str, str] = field(default_factory=dict)

    def of_kind(self, kind: str) -> tuple[Device, ...]:
        """Devices of ``kind``, in index order (empty when there are none)."""
        if kind not in KINDS:
            raise ValueError(f"unknown device kind {kind!r}; expected one of {', '.join(KINDS)}")
        return tuple(d for d in self.devices if d.kind == kind)

    def why_none(self, kind: str) -> str:
        """Why this host has no device of ``kind`` ("" when it has one)."""
        if self.of_kind(kind):
            return ""
        return self.notes.get(kind) or f"no {kind} device found"

    def to_dict(self) -> dict[str, object]:
        return {
            "cpu_cores": self.cpu_cores,
            "devices": [
                {"kind": d.kind, "index": d.index, "name": d.name, "details": dict(d.details)}
                for d in self.devices
            ],
            "notes": dict(self.notes),
        }


_cached: Inventory | None = None
_cache_lock = threading.Lock()


def inventory(*, refresh: bool = False) -> Inventory:
    """This host's devices; detected once per process (``refresh=True`` detects again).

    The first call may take a few seconds where a JAX TPU/GPU runtime is installed (a
    subprocess asks JAX); later calls are free.
    """
    global _cached
    with _cache_lock:
        if _cached is None or refresh:
            _cached = _detect()
        return _cached


def _detect() -> Inventory:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cpu = cpu_fingerprint()
    devices = [Device("cpu", 0, cpu["cpu"], {"cores": str(cores or 1)})]
    notes: dict[str, str] = {}
    for detect in (_detect_cuda, _detect_jax, _detect_metal, _detect_neuron):
        found, why = detect()
        devices.extend(found)
        notes.update(why)
    return Inventory(cores or 1, tuple(devices), notes)


def _detect_cuda() -> tuple[list[Device], dict[str, str]]:
    smi = shutil.which("nvidia-smi")
    if smi:
        devices, error = _nvidia_smi(smi)
        if devices:
            return _visible(devices), {}
        why = f"nvidia-smi lists no GPU ({error})" if error else "nvidia-smi lists no GPU"
    else:
        why = "nvidia-smi not found on PATH"
    devices = _nvidia_proc()
    if devices:
        return _visible(devices), {}
    return [], {"cuda": f"{why}, and {NVIDIA_PROC_DIR} does not exist (no NVIDIA driver)"}


def _nvidia_smi(smi: str) -> tuple[list[Device], str]:
    """GPUs from ``nvidia-smi --query-gpu``; compute capability and CUDA version where known."""
    fields: tuple[str, ...] = (*_SMI_FIELDS, "compute_cap")
    out, error = _run([smi, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"])
    if out is None:  # old drivers have no compute_cap field
        fields = _SMI_FIELDS
        out, error = _run([smi, f"--query-gpu={','.join(fields)}", "--format=csv,noheader"])
    if out is None:
        return [], error
    header, _ = _run([smi])
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", header or "")
    devices = []
    for line in out.splitlines():
        values = [v.strip() for v in line.split(",")]
        if len(values) != len(fields) or not values[0].isdigit():
            continue
        row = dict(zip(fields, values, strict=True))
        details = {
            "uuid": row["uuid"],
            "driver": row["driver_version"],
            "memory": _mib(row["memory.total"]),
            "pci_bus_id": row["pci.bus_id"],
        }
        if row.get("compute_cap"):
            details["compute_capability"] = row["compute_cap"]
        if cuda:
            details["cuda_driver_api"] = cuda.group(1)
        devices.append(Device("cuda", int(row["index"]), row["name"], details))
    return devices, "" if devices else f"unparsable output: {out[:200]!r}"


def _nvidia_proc() -> list[Device]:
    """GPUs from the driver's ``/proc`` files (no ``nvidia-smi``: a minimal container)."""
    devices = []
    for index, folder in enumerate(sorted(glob.glob(os.path.join(NVIDIA_PROC_DIR, "*")))):
        info: dict[str, str] = {}
        with contextlib.suppress(OSError):
            for line in Path(folder, "information").read_text().splitlines():
                key, _, value = line.partition(":")
                info[key.strip()] = value.strip()
        details = {"pci_bus_id": os.path.basename(folder)}
        if info.get("GPU UUID"):
            details["uuid"] = info["GPU UUID"]
        with contextlib.suppress(OSError):
            version = Path(NVIDIA_PROC_DIR).parent.joinpath("version").read_text()
            if match := re.search(r"Kernel Module\s+([\d.]+)", version):
                details["driver"] = match.group(1)
        devices.append(Device("cuda", index, info.get("Model", "NVIDIA GPU"), details))
    return devices


def _visible(devices: list[Device]) -> list[Device]:
    """Honour ``CUDA_VISIBLE_DEVICES`` (indices or uuids) the way CUDA programs will."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return devices
    wanted = [v.strip() for v in visible.split(",") if v.strip()]
    return [
        d
        for d in devices
        if str(d.index) in wanted or any(d.details.get("uuid", "").startswith(w) for w in wanted)
    ]


def _detect_jax() -> tuple[list[Device], dict[str, str]]:
    if importlib.util.find_spec("jax") is None:
        why = "jax is not installed"
        return [], {"tpu": why, "jax-gpu": why}
    runtimes = _installed(_TPU_RUNTIMES)
    plugins = _installed(_JAX_GPU_PLUGINS)
    notes = {}
    if not runtimes:
        notes["tpu"] = "no TPU runtime (libtpu) installed: jax can use the CPU only"
    if not plugins:
        notes["jax-gpu"] = "no JAX GPU plugin (jax-cuda12-plugin, ...) installed"
    if not runtimes and not plugins:
        return [], notes  # JAX can only see the CPU: no need to ask it
    found, error = _jax_devices()
    if error:
        return [], {"tpu": error, "jax-gpu": error}
    devices, counts = [], collections.Counter[str]()
    for platform_name, device_kind in found:
        kind = "tpu" if platform_name == "tpu" else "jax-gpu"
        if platform_name in ("tpu", "gpu", "cuda", "rocm"):
            devices.append(Device(kind, counts[kind], device_kind, {"platform": platform_name}))
            counts[kind] += 1
    platforms = ", ".join(sorted({p for p, _ in found})) or "none"
    for kind in ("tpu", "jax-gpu"):
        if not counts[kind]:
            notes.setdefault(kind, f"jax sees no {kind} device (platforms: {platforms})")
    return devices, notes


def _jax_devices() -> tuple[list[tuple[str, str]], str]:
    """``(platform, device_kind)`` of every JAX device, asked in a subprocess."""
    code = (
        "import json, jax\n"
        "print(json.dumps([[d.platform, d.device_kind] for d in jax.devices()]))\n"
    )
    out, error = _run([sys.executable, "-c", code], timeout_s=_JAX_PROBE_TIMEOUT_S)
    if out is None:
        return [], f"asking jax for its devices failed: {error}"
    try:
        return [(str(p), str(k)) for p, k in json.loads(out.strip().splitlines()[-1])], ""
    except (ValueError, IndexError, TypeError):
        return [], f"asking jax for its devices gave unparsable output: {out[-200:]!r}"


def _detect_metal() -> tuple[list[Device], dict[str, str]]:
    if platform.system() != "Darwin":
        return [], {"metal": f"not macOS ({platform.system()} {platform.machine()})"}
    try:
        import Metal  # pyobjc-framework-Metal
    except ImportError:
        return [], {"metal": "pyobjc-framework-Metal is not installed"}
    device = Metal.MTLCreateSystemDefaultDevice()
    if device is None:
        return [], {"metal": "macOS reports no Metal device (MTLCreateSystemDefaultDevice)"}
    details = {
        "unified_memory": str(bool(device.hasUnifiedMemory())),
        "max_working_set": _mib(str(device.recommendedMaxWorkingSetSize() // 2**20)),
        "macos": platform.mac_ver()[0],
    }
    return [Device("metal", 0, str(device.name()), details)], {}


def _detect_neuron() -> tuple[list[Device], dict[str, str]]:
    nodes = sorted(glob.glob("/dev/neuron[0-9]*"), key=lambda p: int(re.sub(r"\D", "", p) or 0))
    toolchain = neuron_toolchain()
    details = {"toolchain": toolchain or "missing"}
    devices = [
        Device("neuron", i, "AWS Neuron device", {"path": path, **details})
        for i, path in enumerate(nodes)
    ]
    if not devices:
        return [], {"neuron": "no /dev/neuron* device"}
    return devices, {}


def neuron_toolchain() -> str:
    """The real Neuron compiler's version, or "" when absent or the PyPI placeholder.

    The ``neuronx-cc`` and ``nki`` names on PyPI are placeholder wheels; the real packages
    come from Neuron's own package index and provide the ``neuronxcc`` module (with ``nki``).
    """
    try:
        version = metadata.version("neuronx-cc")
    except metadata.PackageNotFoundError:
        return ""
    if importlib.util.find_spec("neuronxcc") is None:
        return ""
    try:
        has_nki = importlib.util.find_spec("neuronxcc.nki") is not None
    except (ImportError, ValueError):
        has_nki = False
    return version if has_nki else ""


def _installed(names: Sequence[str]) -> list[str]:
    found = []
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            metadata.version(name)
            found.append(name)
    return found


def _run(argv: list[str], *, timeout_s: float = _NVIDIA_SMI_TIMEOUT_S) -> tuple[str | None, str]:
    """stdout of a short command, or ``(None, why it failed)``."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        return None, f"{os.path.basename(argv[0])} did not answer within {timeout_s:g} s"
    except OSError as exc:
        return None, f"{os.path.basename(argv[0])} could not run: {exc}"
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return None, f"{os.path.basename(argv[0])} exited with {done.returncode}: {tail[0]}"
    return done.stdout, ""


def _mib(value: str) -> str:
    value = value.strip()
    return value if not value.isdigit() else f"{value} MiB"
