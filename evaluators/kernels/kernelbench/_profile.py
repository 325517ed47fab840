"""Which kernels a candidate's time goes to, for the next prompt (KForge's profiling feedback).

After a candidate is timed on a GPU, a few more calls of it run under ``torch.profiler``; the
kernels (and operators) with the most self time on the device become the ``profile``
artifact: "78 % of the time is in ``aten::addmm``, your Triton kernel takes 12 %" tells a
model what to write next, where a speedup figure alone does not. On a CPU the same function
profiles operators by self CPU time (used by tests; the CPU path does not time candidates).

Runs inside the candidate's sandboxed process, after its timing was checked: what it reports
is feedback only, never a metric.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PROFILED_CALLS = 5
TOP_KERNELS = 8
_NAME_CHARS = 90


def top_kernels(
    model: Callable[..., Any],
    inputs: Callable[[], list[Any]],
    device: Any,
    *,
    calls: int = PROFILED_CALLS,
    top: int = TOP_KERNELS,
) -> str:
    """The ``top`` kernels of ``calls`` calls of ``model`` by self time, as text ("" when the
    profiler recorded none).

    Args:
        model: the candidate's module (called as ``model(*inputs())``).
        inputs: a fresh input set per call, already on ``device``.
        device: a ``torch.device``; on ``cuda`` kernels are ranked by device time, else
            operators by CPU time.
    """
    import torch
    from torch.profiler import ProfilerActivity, profile

    on_gpu = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    with torch.no_grad(), profile(activities=activities) as recorded:
        for _ in range(calls):
            model(*inputs())
        if on_gpu:
            torch.cuda.synchronize()
    times = [
        (name, count, us)
        for name, count, us in (_row(event, on_gpu) for event in recorded.key_averages())
        if us > 0
    ]
    return format_profile(times, calls, "device" if on_gpu else "CPU", top)


def candidate_profile(
    model: Callable[..., Any], inputs: Callable[[], list[Any]], device: Any
) -> str:
    """:func:`top_kernels`, or "" when profiling fails: the profile is feedback, and a
    candidate that breaks the profiler (or a torch without it) loses only that."""
    try:
        return top_kernels(model, inputs, device)
    except Exception:  # noqa: BLE001 - whatever the candidate's code raises under the profiler
        return ""


def _row(event: Any, on_gpu: bool) -> tuple[str, int, float]:
    if on_gpu:  # torch >= 2.4 names it device time; older releases cuda time
        us = getattr(event, "self_device_time_total", None)
        if us is None:
            us = getattr(event, "self_cuda_time_total", 0.0)
    else:
        us = event.self_cpu_time_total
    return str(event.key), int(event.count), float(us or 0.0)


def format_profile(
    times: list[tuple[str, int, float]], calls: int, clock: str, top: int = TOP_KERNELS
) -> str:
    """``(name, count, self microseconds)`` rows as the artifact's text, costliest first.

    Example::

        Kernels by self device time over 5 calls of ModelNew (torch.profiler):
             812.4 us  71.3%  x5     aten::addmm
    """
    total = sum(us for _, _, us in times)
    if total <= 0:
        return ""
    ranked = sorted(times, key=lambda row: (-row[2], row[0]))[:top]
    rows = []
    for name, count, us in ranked:
        if len(name) > _NAME_CHARS:
            name = name[: _NAME_CHARS - 3] + "..."
        rows.append(f"  {us:>10,.1f} us  {100 * us / total:5.1f}%  x{count:<5} {name}")
    head = f"Kernels by self {clock} time over {calls} calls of ModelNew (torch.profiler):"
    return "\n".join([head, *rows])
