"""Per-candidate overhead of the python evaluator's sandbox.

Runs no-op candidates (``def main(): return 0``) one after another through one
``PythonEvaluator`` (one fork server) and prints the median and p90 of:

  - eval_s:   fork of the candidate until its exit was seen (the sandbox's child side);
  - total_s:  request received until response ready, in the fork server (adds scoring);
  - caller_s: what the awaiting task sees (adds the pipe round trip and asyncio);
  - event-loop CPU: CPU time the caller's thread spends per evaluate() (the part that competes
    with the engine's own work; the rest is waiting).

For scale it also times a bare ``os.fork()`` + ``os._exit(0)`` + ``os.wait4()`` of an
interpreter with the same modules imported: the floor any fork-based sandbox pays here.

    python bench/sandbox_overhead.py                   # 300 candidates, numpy preloaded
    python bench/sandbox_overhead.py --preload ""      # nothing preloaded
    python bench/sandbox_overhead.py --network candidate   # one network namespace each
    python bench/sandbox_overhead.py --gap-ms 20 [--no-prefork]  # idle time between candidates
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluators import Status  # noqa: E402
from evaluators._python import PythonEvaluator  # noqa: E402
from problems import load_problem  # noqa: E402

SPEC = """
name = "noop"
objectives = {{"score": "maximize"}}
preload = {preload!r}
timeout_s = 10
memory_mb = 2048
options = {{"sandbox_network": {network!r}, "sandbox_prefork": {prefork!r}}}

def evaluate(output):
    return {{"score": float(output)}}
"""
SEED = "# EVOLVE-BLOCK-START\ndef main():\n    return 0\n# EVOLVE-BLOCK-END\n"


async def measure(folder: Path, n: int, gap_s: float) -> tuple[dict[str, list[float]], dict]:
    series: dict[str, list[float]] = {"eval_s": [], "total_s": [], "caller_s": [], "loop_cpu": []}
    async with PythonEvaluator(load_problem(folder)) as evaluator:
        for _ in range(20):  # warm-up
            await evaluator.evaluate(SEED)
        for _ in range(n):
            if gap_s:
                await asyncio.sleep(gap_s)  # as when a model call sits between evaluations
            start, cpu = time.perf_counter(), time.thread_time()
            result = await evaluator.evaluate(SEED)
            seen, cpu = time.perf_counter() - start, time.thread_time() - cpu
            if result.status is not Status.OK:
                raise SystemExit(f"no-op candidate failed: {result.status} {result.artifacts}")
            series["eval_s"].append(result.timings["eval_s"])
            series["total_s"].append(result.timings["total_s"])
            series["caller_s"].append(seen)
            series["loop_cpu"].append(cpu)
        return series, evaluator.sandbox_info


def bare_fork(preload: list[str], n: int) -> list[float]:
    for name in preload:
        importlib.import_module(name)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.wait4(pid, 0)
        times.append(time.perf_counter() - start)
    return times


def row(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return f"{name:<34} {statistics.median(values) * 1e3:8.3f} {p90 * 1e3:8.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="candidates to time")
    parser.add_argument("--preload", default="numpy", help="comma-separated modules")
    parser.add_argument("--network", default="server", choices=("server", "candidate", "host"))
    parser.add_argument("--no-prefork", action="store_true", help="fork at request time")
    parser.add_argument(
        "--gap-ms",
        type=float,
        default=0.0,
        help="idle time before each candidate (default 0: back to back)",
    )
    args = parser.parse_args()
    preload = [m for m in args.preload.split(",") if m]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "problem.py").write_text(
            SPEC.format(preload=preload, network=args.network, prefork=not args.no_prefork)
        )
        (folder / "seed.py").write_text(SEED)
        series, info = asyncio.run(measure(folder, args.n, args.gap_ms / 1000))
    floor = bare_fork(preload, args.n)
    print(
        f"{args.n} no-op candidates, preload={preload}, network={info.get('network')}, "
        f"prefork={not args.no_prefork}, gap={args.gap_ms:g} ms, candidate user: "
        f"{info.get('user')}; {os.cpu_count()} cores",
        file=sys.stderr,
    )
    print(f"{'milliseconds':<34} {'median':>8} {'p90':>8}")
    print(row("eval_s   (fork -> exit)", series["eval_s"]))
    print(row("total_s  (request -> response)", series["total_s"]))
    print(row("caller_s (seen by the awaiting task)", series["caller_s"]))
    print(row("event-loop CPU per evaluate()", series["loop_cpu"]))
    print(row("bare fork+exit+wait (floor)", floor))


if __name__ == "__main__":
    main()
