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

``--compare-filesystem`` runs two evaluators, one with the filesystem isolation (private mount
namespace, capabilities dropped) and one without (``sandbox_filesystem=False``), in blocks of 25
candidates taken in turn (so load on a shared machine hits both alike), and prints both: the
difference is what the isolation costs a candidate. ``cpu_s`` is the candidate process's own
CPU time, set-up included (it runs before the request arrives, off the latency path).

    python bench/sandbox_overhead.py                   # 300 candidates, numpy preloaded
    python bench/sandbox_overhead.py --preload ""      # nothing preloaded
    python bench/sandbox_overhead.py --network candidate   # one network namespace each
    python bench/sandbox_overhead.py --gap-ms 20 [--no-prefork]  # idle time between candidates
    python bench/sandbox_overhead.py --compare-filesystem  # isolation on vs off, interleaved
    python bench/sandbox_overhead.py --compare-containment  # the second round on vs off

``--compare-containment`` runs the defaults (candidates as ``nobody`` in the server's candidate
PID namespace with their own ``/proc``, an IPC namespace each, the seccomp filter against UNIX
sockets, the memory cgroup) against the branch point's sandbox (root candidates, none of
those), in interleaved blocks, and prints the difference of the medians: what the second round
of containment costs a candidate.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evoforge.evaluators import Status  # noqa: E402
from evoforge.evaluators.python._evaluator import PythonEvaluator  # noqa: E402
from evoforge.problems import load_problem  # noqa: E402

SPEC = """
name = "noop"
objectives = {{"score": "maximize"}}
preload = {preload!r}
timeout_s = 10
memory_mb = 2048
options = {options!r}

def evaluate(output):
    return {{"score": float(output)}}
"""
SEED = "# EVOLVE-BLOCK-START\ndef main():\n    return 0\n# EVOLVE-BLOCK-END\n"


SERIES = ("eval_s", "total_s", "caller_s", "loop_cpu", "cpu_s")
# The branch point's sandbox: candidates as root, no PID/IPC namespace, no seccomp, no cgroup.
BEFORE = {"sandbox_namespaces": False, "sandbox_cgroup": False, "sandbox_unix_sockets": True}
BLOCK = 25  # candidates in a row on one evaluator when comparing


async def measure(
    folders: list[Path], n: int, gap_s: float
) -> tuple[list[dict[str, list[float]]], list[dict]]:
    """Time ``n`` no-op candidates on one evaluator per folder, in blocks taken in turn.

    Blocks, not single candidates: an evaluator forks its next child in the background after
    each answer, and that work would land on the other evaluator's measurement.
    """
    series = [{name: [] for name in SERIES} for _ in folders]
    evaluators = [PythonEvaluator(load_problem(folder)) for folder in folders]
    try:
        for evaluator in evaluators:
            await evaluator.start()
        for _ in range(20):  # warm-up
            for evaluator in evaluators:
                await evaluator.evaluate(SEED)
        for block in range(math.ceil(n / BLOCK)):
            for evaluator, times in zip(evaluators, series, strict=True):
                await asyncio.sleep(0.05)  # the other evaluator's background work ends
                for _ in range(min(BLOCK, n - block * BLOCK)):
                    if gap_s:
                        await asyncio.sleep(gap_s)  # as when a model call sits in between
                    await _time_one(evaluator, times)
        return series, [evaluator.sandbox_info for evaluator in evaluators]
    finally:
        for evaluator in evaluators:
            await evaluator.close()


async def _time_one(evaluator: PythonEvaluator, times: dict[str, list[float]]) -> None:
    start, cpu = time.perf_counter(), time.thread_time()
    result = await evaluator.evaluate(SEED)
    seen, cpu = time.perf_counter() - start, time.thread_time() - cpu
    if result.status is not Status.OK:
        raise SystemExit(f"no-op candidate failed: {result.status} {result.artifacts}")
    times["eval_s"].append(result.timings["eval_s"])
    times["total_s"].append(result.timings["total_s"])
    times["caller_s"].append(seen)
    times["loop_cpu"].append(cpu)
    times["cpu_s"].append(result.timings["cpu_s"])


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
        "--no-filesystem", action="store_true", help="no mount namespace (sandbox_filesystem)"
    )
    parser.add_argument(
        "--compare-filesystem",
        action="store_true",
        help="time filesystem isolation on and off, interleaved",
    )
    parser.add_argument(
        "--compare-containment",
        action="store_true",
        help="time the second round's containment (unprivileged user, PID and IPC namespaces, "
        "seccomp, cgroup) on and off, interleaved; off is the branch point's sandbox",
    )
    parser.add_argument(
        "--gap-ms",
        type=float,
        default=0.0,
        help="idle time before each candidate (default 0: back to back)",
    )
    args = parser.parse_args()
    preload = [m for m in args.preload.split(",") if m]
    base = {"sandbox_network": args.network, "sandbox_prefork": not args.no_prefork}
    root = {"sandbox_user": None, "sandbox_allow_root": True}
    if args.compare_containment:
        variants = [
            ("after", {**base}),  # the defaults: nobody, namespaces, seccomp, cgroup
            ("before", {**base, **root, **BEFORE}),
        ]
    elif args.compare_filesystem:
        variants = [
            (f"filesystem-{on}", {**base, **root, "sandbox_filesystem": on}) for on in (True, False)
        ]
    else:
        variants = [("only", {**base, **root, "sandbox_filesystem": not args.no_filesystem})]
    with tempfile.TemporaryDirectory() as tmp:
        folders = []
        for label, options in variants:
            folder = Path(tmp) / label
            folder.mkdir()
            spec = SPEC.format(preload=preload, options=options)
            (folder / "problem.py").write_text(spec)
            (folder / "seed.py").write_text(SEED)
            folders.append(folder)
        all_series, infos = asyncio.run(measure(folders, args.n, args.gap_ms / 1000))
    floor = bare_fork(preload, args.n)
    info = infos[0]
    print(
        f"{args.n} no-op candidates, preload={preload}, network={info.get('network')}, "
        f"prefork={not args.no_prefork}, gap={args.gap_ms:g} ms, candidate user: "
        f"{info.get('user')}; {os.cpu_count()} cores",
        file=sys.stderr,
    )
    for (label, _), series, info in zip(variants, all_series, infos, strict=True):
        print(f"\n[{label}] user: {info.get('user')}")
        print(f"filesystem: {info.get('filesystem')}; capabilities: {info.get('capabilities')}")
        for key in ("pid namespace", "ipc namespace", "unix sockets", "memory"):
            print(f"{key}: {info.get(key)}")
        print(f"{'milliseconds':<34} {'median':>8} {'p90':>8}")
        print(row("eval_s   (fork -> exit)", series["eval_s"]))
        print(row("total_s  (request -> response)", series["total_s"]))
        print(row("caller_s (seen by the awaiting task)", series["caller_s"]))
        print(row("event-loop CPU per evaluate()", series["loop_cpu"]))
        print(row("candidate CPU (set-up + no-op)", series["cpu_s"]))
    if args.compare_containment:
        after, before = all_series
        print("\nadded by the second round (median after - median before), milliseconds:")
        for name in SERIES:
            delta = statistics.median(after[name]) - statistics.median(before[name])
            print(f"  {name:<10} {delta * 1e3:+8.3f}")
    print()
    print(row("bare fork+exit+wait (floor)", floor))


if __name__ == "__main__":
    main()
