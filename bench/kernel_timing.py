"""How stable the GPU kernel timing is: the ``triton_softmax`` seed timed in N evaluations.

Each evaluation is the full protocol of the ``triton`` evaluator (a fresh runner, correctness
on hidden inputs, then CUDA-event timing with L2 flushes, interleaved with eager PyTorch).
Prints every evaluation's median time, its within-run coefficient of variation (CV) and
speedup, then the CV of the medians across evaluations: the noise a run sees between two
measurements of the same kernel. Without a CUDA GPU it says so and exits.

    python bench/kernel_timing.py              # 20 evaluations, 100 timed calls each
    python bench/kernel_timing.py -n 10 --repeats 200
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from evoforge.evaluators import Status
from evoforge.evaluators.kernels.kernelbench._evaluator import gpu_missing
from evoforge.evaluators.kernels.kernelbench._triton import TritonEvaluator
from evoforge.problems import load_problem

SOFTMAX = Path(__file__).resolve().parents[1] / "problems" / "builtin" / "triton_softmax"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20, help="evaluations of the seed")
    parser.add_argument("--repeats", type=int, default=100, help="timed calls per evaluation")
    args = parser.parse_args()
    why = gpu_missing()
    if why:
        print(f"no CUDA GPU to time on: {why}; the triton evaluator checks correctness only here")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp, "triton_softmax")
        folder.mkdir()
        for name in ("task.py", "seed.py"):
            (folder / name).write_text((SOFTMAX / name).read_text())
        spec = (
            (SOFTMAX / "problem.py")
            .read_text()
            .replace('"trials": 5,', f'"trials": 5, "timing_repeats": {args.repeats},')
        )
        (folder / "problem.py").write_text(spec)
        problem = load_problem(folder)
        results = asyncio.run(_evaluate(problem, args.n))
    medians = []
    print(f"{'#':>3} {'median ms':>10} {'IQR ms':>9} {'CV':>7} {'speedup':>8}  wall s")
    for i, (result, wall) in enumerate(results):
        if result.status is not Status.OK:
            print(f"{i:>3} {result.status.value}: {result.artifacts.get('error', '')[:200]}")
            continue
        m = result.metrics
        medians.append(m["time_ms"])
        print(
            f"{i:>3} {m['time_ms']:>10.4f} {m['time_iqr_ms']:>9.4f} {m['time_cv']:>7.3f} "
            f"{m['speedup_vs_eager']:>8.3f}  {wall:6.1f}"
        )
    if len(medians) < 2:
        print("too few successful evaluations for a CV")
        return 1
    cv = statistics.stdev(medians) / statistics.fmean(medians)
    device = results[0][0].metrics.get("timed_device", "?")
    print(
        f"\n{len(medians)} evaluations on {device}: median of medians "
        f"{statistics.median(medians):.4f} ms, CV across evaluations {cv:.4f} ({cv * 100:.2f} %)"
    )
    return 0


async def _evaluate(problem, n: int) -> list:
    results = []
    async with TritonEvaluator(problem, workers=1) as evaluator:
        for _ in range(n):
            start = time.perf_counter()
            result = await evaluator.evaluate(problem.seed_source)
            results.append((result, time.perf_counter() - start))
    return results


if __name__ == "__main__":
    sys.exit(main())
