"""KernelBench on this CPU: every task of a KernelBench checkout's levels, its untouched seed
(ModelNew = the task's own Model, as `evoforge run <task.py> --target triton` writes it)
judged by the ``triton`` evaluator, task by task.

Each task goes the way ``evoforge run`` takes it: the KernelBench adapter (``resolve``), the
problem as this host can measure it (correctness only without a GPU), then one evaluation of
the seed by the ``TritonEvaluator`` (fresh runner, shapes shrunk by the documented rule, five
trials, the reference run after the candidate). Prints a markdown table, one row per task as
soon as it is known (status, original and shrunk input shapes, wall time), and a summary per
level: correct, incorrect, and "not run" (the task's own reference could not run, so no
candidate was judged). With ``--out`` the table is also written there, row by row.

    python bench/kernelbench_cpu.py /path/to/KernelBench                # levels 1 and 2
    python bench/kernelbench_cpu.py /path/to/KernelBench --levels 1 --first 10
    nice python bench/kernelbench_cpu.py ~/KernelBench --out bench/kernelbench_cpu.md

Each evaluation is bounded by the problem's own timeouts (120 s for the candidate, 300 s for
the reference) and by ``--task-timeout`` around the whole of it.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from evoforge.evaluators import EvalResult, Status
from evoforge.evaluators.kernels.kernelbench._triton import TritonEvaluator
from evoforge.evolve import measurable_problem, resolve

NOT_RUN = "not run"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a clone of ScalingIntelligence/KernelBench")
    parser.add_argument("--levels", default="1,2", help="comma-separated levels (default 1,2)")
    parser.add_argument("--first", type=int, default=0, help="only the first N tasks per level")
    parser.add_argument("--only", default="", help="only tasks whose file name contains this")
    parser.add_argument("--task-timeout", type=float, default=600.0, help="seconds per task")
    parser.add_argument("--out", type=Path, help="also write the markdown table here")
    args = parser.parse_args()
    root = args.checkout / "KernelBench"
    if not root.is_dir():
        print(
            f"{args.checkout} has no KernelBench/ folder; give a KernelBench clone", file=sys.stderr
        )
        return 2
    available = TritonEvaluator.availability()
    if not available.available:
        print(f"the triton evaluator cannot run here: {available.reason}", file=sys.stderr)
        return 2
    out = args.out.open("w") if args.out else None
    with tempfile.TemporaryDirectory() as cache:
        os.environ["EVOFORGE_CACHE"] = cache  # generated problem folders, thrown away after
        _write(out, _header())
        for level in [int(x) for x in args.levels.split(",") if x.strip()]:
            files = _tasks(root / f"level{level}", args.first, args.only)
            counts: collections.Counter[str] = collections.Counter()
            _write(out, f"\n## Level {level} ({len(files)} tasks)\n")
            _write(out, "| task | status | shapes (full) | shapes (as run) | s | why |")
            _write(out, "|---|---|---|---|---:|---|")
            for file in files:
                row, verdict = _task_row(file, args.task_timeout)
                counts[verdict] += 1
                _write(out, row)
            _write(out, "\n" + _summary(level, len(files), counts))
    if out is not None:
        out.close()
    return 0


def _tasks(folder: Path, first: int, only: str) -> list[Path]:
    from evoforge.problems.adapters._kernelbench import task_files

    files = [f for f in task_files(folder) if only in f.name]
    return files[:first] if first else files


def _task_row(file: Path, timeout: float) -> tuple[str, str]:
    start = time.perf_counter()
    full = _full_shapes(file)
    try:
        result = asyncio.run(asyncio.wait_for(_evaluate_seed(file), timeout))
    except TimeoutError:
        wall = time.perf_counter() - start
        return _row(
            file, "timeout", full, "", wall, f"over --task-timeout {timeout:g} s"
        ), "timeout"
    wall = time.perf_counter() - start
    shapes = result.metrics.get("shapes") or []
    run_shapes = str(shapes[0]) if shapes else ""
    error = str(result.artifacts.get("error", ""))
    if result.artifacts.get("reference_error"):
        verdict = NOT_RUN
    elif result.status is Status.OK:
        verdict = "correct"
    else:
        verdict = result.status.value
    return _row(file, verdict, full, run_shapes, wall, error), verdict


async def _evaluate_seed(file: Path) -> EvalResult:
    (problem,) = resolve(str(file), target="triton").problems
    measurable, _ = measurable_problem(problem, TritonEvaluator)
    async with TritonEvaluator(measurable, workers=1) as evaluator:
        return await evaluator.evaluate(problem.seed_source)


def _full_shapes(file: Path) -> str:
    """The task's own input shapes, measured on the meta device (no memory)."""
    from evoforge.evaluators.kernels.kernelbench._harness import load_task
    from evoforge.evaluators.kernels.kernelbench._shrink import _meta_inputs

    try:
        inputs, _ = _meta_inputs(load_task(file))
    except Exception as exc:
        return f"({type(exc).__name__})"
    return ", ".join("x".join(map(str, x.shape)) if hasattr(x, "shape") else "·" for x in inputs)


def _row(file: Path, verdict: str, full: str, run: str, wall: float, why: str) -> str:
    why = " ".join(why.split())[:240].replace("|", "\\|") if verdict != "correct" else ""
    return f"| {file.stem} | {verdict} | {full} | {run} | {wall:.1f} | {why} |"


def _summary(level: int, tasks: int, counts: collections.Counter[str]) -> str:
    ran = tasks - counts[NOT_RUN]
    others = ", ".join(
        f"{k} {v}" for k, v in sorted(counts.items()) if k not in {"correct", NOT_RUN}
    )
    return (
        f"**Level {level}: {counts['correct']} of {tasks} run and correct**; {NOT_RUN} "
        f"{counts[NOT_RUN]}; of the {ran} that ran, {counts['correct']} correct"
        + (f" ({others})" if others else "")
    )


def _header() -> str:
    import torch

    try:
        import triton

        triton_version = triton.__version__
    except ImportError:
        triton_version = "absent"
    return (
        "# KernelBench levels on CPU: the untouched seed through the triton evaluator\n\n"
        f"Generated by `bench/kernelbench_cpu.py` on {platform.node() or 'this host'} "
        f"({os.cpu_count()} CPUs, Python {platform.python_version()}, torch {torch.__version__}, "
        f"triton {triton_version}, {time.strftime('%Y-%m-%d')}). 'shapes (as run)' are the "
        "first trial's inputs after the shrink rule; 's' is the wall time of the task's "
        "evaluation (fresh runner, five trials, the reference after the candidate)."
    )


def _write(out: TextIO | None, line: str) -> None:
    print(line, flush=True)
    if out is not None:
        out.write(line + "\n")
        out.flush()


if __name__ == "__main__":
    sys.exit(main())
