"""Throughput of the compiler and layout problems, and where an evaluation's time goes.

For each problem (``llvm_inlining``, ``llvm_regalloc_priority``, ``code_layout``) this runs
its seed policy through the real ``llvm`` evaluator (knob tuning off), ``--repeats`` times
per stage, with one evaluation slot, and prints:

  - evaluations/s: whole evaluations (every stage of the cascade) per second, one slot;
  - per stage: seconds, decisions, and the share of the stage spent in LLVM (opt, llc, link,
    callgrind: everything but waiting for the policy), in the policy (from sending a
    decision's features to reading its answer: the sandboxed Python call plus the socket
    round trip) and in the runner's own overhead (request, Python set-up, scoring).

Needs LLVM 19 and the corpora (``evoforge problems setup llvm_inlining`` and ``code_layout``).
Figures depend on the machine and its load: run it on a quiet one.

    python bench/llvm_policies.py [--repeats 3] [--problems llvm_inlining code_layout]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from dataclasses import replace

from evoforge.evaluators.llvm import LlvmEvaluator
from evoforge.evolve.run._session import resolve_problem
from evoforge.problems import problem_unready

PROBLEMS = ("llvm_inlining", "llvm_regalloc_priority", "code_layout")


async def bench(name: str, repeats: int) -> None:
    problem = replace(resolve_problem(name), tuning=None)
    if why := problem_unready(problem):
        print(f"{name}: skipped: {why}")
        return
    evaluator = LlvmEvaluator(problem)
    await evaluator.start()
    try:
        await evaluator.run_stage(problem.seed_source, problem.stages[0])  # start the runner
        totals, rows = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            for stage in problem.stages:
                result = await evaluator.run_stage(problem.seed_source, stage)
                if result.status.value != "ok":
                    raise SystemExit(f"{name}: the seed failed: {result.artifacts}")
                rows.append((stage.name, result))
            totals.append(time.perf_counter() - start)
    finally:
        await evaluator.close()
    per_eval = statistics.median(totals)
    print(
        f"{name}: {1 / per_eval:.3f} evaluations/s ({per_eval:.2f} s per evaluation, "
        f"median of {repeats}, one slot)"
    )
    for stage in problem.stages:
        results = [r for s, r in rows if s == stage.name]
        caller = statistics.median(r.timings["caller_s"] for r in results)
        llvm = statistics.median(r.timings["llvm_s"] for r in results)
        policy = statistics.median(r.timings["policy_s"] for r in results)
        decisions = results[0].metrics.get("decisions", results[0].metrics.get("functions"))
        other = max(0.0, caller - llvm - policy)
        print(
            f"  {stage.name:8} {caller:6.2f} s  {decisions} decisions  "
            f"LLVM {llvm / caller:5.1%}  policy {policy / caller:5.1%} "
            f"({1e6 * policy / max(1, decisions):.0f} µs/decision)  runner {other / caller:5.1%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=PROBLEMS)
    args = parser.parse_args()
    for name in args.problems:
        asyncio.run(bench(name, args.repeats))


if __name__ == "__main__":
    main()
