"""Fingerprints of the machine a result was measured on (stored with every program)."""

from __future__ import annotations

import functools
import os
import platform
from importlib import metadata


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
