"""Timing GPU kernels honestly (KernelBench protocol, hardened): CUDA events around each call.

Per timed call: write a 256 MiB buffer (evicts L2, which is 50 MB on an H100), demote
persisting L2 lines, synchronise the device, record the start event, call, synchronise the
*whole device* (so work the candidate left on another stream is counted), record the end event.
The device-wide synchronisation adds a few microseconds of host latency to every call, the
candidate's and the reference's alike: it compresses speedups of very short kernels towards 1,
never inflates them.

Calls are interleaved (candidate and reference alternate, the order flipping every iteration),
each iteration gets fresh input values, and both outputs of an iteration are compared, so an
output cached across calls is caught while being timed. The clock objects are captured when a
:class:`CudaTimer` is made, before any candidate code runs.

:func:`summarize` is plain Python (no torch) so the statistics are testable anywhere.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evoforge.evaluators.kernels.kernelbench._guards import PersistingL2Guard, Rejected


@dataclass(frozen=True)
class TimingSettings:
    """How much to time. ``repeats`` timed calls of each function after ``warmups`` untimed."""

    warmups: int = 3
    repeats: int = 100
    flush_mib: int = 256
    sanity_repeats: int = 20
    pool: int = 4


def summarize(samples_ms: Sequence[float]) -> dict[str, float]:
    """Median, interquartile range, coefficient of variation (std / mean) and minimum."""
    values = sorted(float(v) for v in samples_ms)
    if not values:
        raise ValueError("no samples to summarize; time at least one call")
    if len(values) >= 2:
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
        mean = statistics.fmean(values)
        cv = statistics.stdev(values) / mean if mean > 0 else math.inf
    else:
        q1 = q3 = values[0]
        cv = 0.0
    return {
        "median_ms": statistics.median(values),
        "iqr_ms": q3 - q1,
        "cv": cv,
        "min_ms": values[0],
        "n": float(len(values)),
    }


class CudaTimer:
    """Times single calls with CUDA events; make it before the candidate's code runs."""

    def __init__(self, settings: TimingSettings, l2: PersistingL2Guard | None) -> None:
        import torch

        # Captured now: a candidate that patches torch.cuda later cannot reach these.
        self._event = torch.cuda.Event
        self._record = torch.cuda.Event.record
        self._elapsed = torch.cuda.Event.elapsed_time
        self._wait = torch.cuda.Event.synchronize
        self._sync = torch.cuda.synchronize
        self._l2 = l2
        self._flush = torch.empty(settings.flush_mib * 2**20, dtype=torch.uint8, device="cuda")

    def time(self, fn: Callable[..., Any], args: Sequence[Any]) -> tuple[float, Any]:
        """Milliseconds of one call of ``fn(*args)`` on a cold L2, and what it returned."""
        self._flush.zero_()
        if self._l2 is not None:
            self._l2.reset()
        self._sync()
        start, end = self._event(enable_timing=True), self._event(enable_timing=True)
        self._record(start)
        out = fn(*args)
        self._sync()
        self._record(end)
        self._wait(end)
        return float(self._elapsed(start, end)), out


class CpuTimer:
    """Times single calls on the CPU (``time.perf_counter``), the caches flushed before each
    by writing a buffer larger than a server's last-level cache: the trusted baseline's clock
    where there is no GPU (the interpreter's candidates are never timed)."""

    def __init__(self, settings: TimingSettings) -> None:
        import time

        import torch

        self._clock = time.perf_counter
        self._flush = torch.empty(min(settings.flush_mib, 64) * 2**20, dtype=torch.uint8)

    def time(self, fn: Callable[..., Any], args: Sequence[Any]) -> tuple[float, Any]:
        """Milliseconds of one call of ``fn(*args)`` after a cache flush, and what it returned."""
        self._flush.zero_()
        start = self._clock()
        out = fn(*args)
        return (self._clock() - start) * 1e3, out


class FreshInputs:
    """A new set of input values for every call: a pool of ``get_inputs()`` sets, each use
    a fresh copy with a small random perturbation of its floating-point tensors."""

    def __init__(self, make: Callable[[int], list[Any]], device: Any, pool: int) -> None:
        import torch

        self._sets = []
        for index in range(pool):
            values = [x.to(device) if isinstance(x, torch.Tensor) else x for x in make(index)]
            scales = [
                float(x.float().std()) * 1e-3 if _floating(x) and x.numel() > 1 else 0.0
                for x in values
            ]
            self._sets.append((values, scales))
        self._count = 0

    def __call__(self) -> list[Any]:
        import torch

        values, scales = self._sets[self._count % len(self._sets)]
        self._count += 1
        fresh = []
        for x, scale in zip(values, scales, strict=True):
            if not isinstance(x, torch.Tensor):
                fresh.append(x)
                continue
            y = x.clone()
            if scale:
                y.add_(torch.randn_like(y), alpha=scale)
            fresh.append(y)
        return fresh


def interleave(
    timer: CudaTimer | CpuTimer,
    functions: Mapping[str, Callable[..., Any]],
    inputs: Callable[[], list[Any]],
    *,
    warmups: int,
    repeats: int,
    same_output: Callable[[Any, Any], str] | None = None,
) -> dict[str, list[float]]:
    """Time ``functions`` in alternation on the same fresh inputs; milliseconds per name.

    Args:
        same_output: called with the outputs of the first two functions of an iteration;
            a non-empty answer (why they differ) raises :class:`Rejected`.
    """
    names = list(functions)
    for _ in range(warmups):
        args = inputs()
        for name in names:
            functions[name](*args)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(repeats):
        args = inputs()
        outputs = {}
        for name in names if i % 2 == 0 else reversed(names):
            ms, outputs[name] = timer.time(functions[name], args)
            samples[name].append(ms)
        if same_output is not None and len(names) >= 2:
            why = same_output(outputs[names[0]], outputs[names[1]])
            if why:
                raise Rejected(
                    f"while being timed (call {i + 1}, fresh inputs) the output differed from "
                    f"the reference's: {why}; outputs must be computed from each call's inputs"
                )
    return samples


def _floating(x: Any) -> bool:
    import torch

    return isinstance(x, torch.Tensor) and torch.is_floating_point(x)
