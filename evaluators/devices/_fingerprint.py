"""Fingerprints of the machine a result was measured on (stored with every program)."""

from __future__ import annotations

import contextlib
import functools
import os
import platform
from importlib import metadata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evoforge.evaluators.devices._inventory import Device

LIBRARIES = (
    "torch",
    "triton",
    "jax",
    "jaxlib",
    "libtpu",
    "jax-cuda12-plugin",
    "jax-cuda13-plugin",
    "nvidia-cuda-runtime-cu12",
    "nvidia-cuda-runtime",
    "neuronx-cc",
    "nki",
    "pyobjc-framework-Metal",
)
"""Distributions whose versions go into a fingerprint when installed (read, never imported)."""


def fingerprint(device: Device | None = None) -> dict[str, str]:
    """Where a result was measured: the CPU fingerprint, the device, and library versions.

    Library versions are read from installed metadata (see :data:`LIBRARIES`), so nothing heavy
    is imported. Keys of the device part are prefixed ``device_``.
    """
    result = cpu_fingerprint()
    if device is not None:
        result["device_kind"] = device.kind
        result["device_index"] = str(device.index)
        result["device_name"] = device.name
        for key, value in device.details.items():
            result[f"device_{key}"] = str(value)
    result.update(_library_versions())
    return result


@functools.cache
def _library_versions_cached() -> tuple[tuple[str, str], ...]:
    found = []
    for name in LIBRARIES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found.append((name, metadata.version(name)))
    return tuple(found)


def _library_versions() -> dict[str, str]:
    return dict(_library_versions_cached())


def cpu_fingerprint() -> dict[str, str]:
    """Host name, platform, CPU model, logical cores, Python and numpy versions.

    Computed once per process; each call returns a fresh copy that the caller may keep.
    """
    return dict(_cpu_fingerprint())


@functools.cache
def _cpu_fingerprint() -> tuple[tuple[str, str], ...]:
    fields = {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "logical_cores": str(os.cpu_count() or 0),
        "python": platform.python_version(),
    }
    if hasattr(os, "sched_getaffinity"):
        fields["usable_cores"] = str(len(os.sched_getaffinity(0)))
    try:
        fields["numpy"] = metadata.version("numpy")
    except metadata.PackageNotFoundError:
        pass
    return tuple(fields.items())


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Hardware", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"
