"""Evaluations per second of the native evaluator for each measure, and the sandbox's overhead.

Builds a small C problem (sum of the numbers read, two tests) once per measure (callgrind,
cachegrind, mca:znver4, wall, qemu:riscv64 where qemu-user and the cross libraries are
installed: its overhead includes the cross compile and the TCG plugin's build), evaluates
the seed once to warm up (the seed and -O3 reference measures are taken then), and then times
``--n`` candidates one after another, each a distinct source (a comment with a counter) so
that nothing can be served from a cache. For scale it times
the bare pipeline with no sandbox: ``clang-19 -O2`` + running each test with subprocess, and the
same plus ``valgrind --tool=callgrind`` on each test. The overhead printed is the evaluator's
median minus the bare pipeline's median (callgrind against bare callgrind, the others against
the bare compile+run). Prints figures; asserts nothing.

    python bench/native_eval.py            # 8 candidates per measure
    python bench/native_eval.py --n 20 --measures callgrind wall
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from evoforge.evaluators.native import NativeEvaluator, measure_unavailable
from evoforge.problems import load_problem

SEED = """\
#include <stdio.h>
int main(void) {
    long n, s = 0, x;
    if (scanf("%ld", &n) != 1) return 1;
    // EVOLVE-BLOCK-START
    for (long i = 0; i < n; i++) { if (scanf("%ld", &x) != 1) return 2; s += x; }
    // EVOLVE-BLOCK-END
    printf("%ld\\n", s);
    return 0;
}
"""
TESTS = [("3\n1 2 3\n", "6\n"), ("5\n1 2 3 4 5\n", "15\n")]
OBJECTIVE = {
    "callgrind": "instructions",
    "cachegrind": "cycles",
    "mca:znver4": "mca_cycles",
    "wall": "wall_s",
    "qemu:riscv64": "instructions",
}


def make_problem(root: Path, measure: str) -> Path:
    folder = root / measure.replace(":", "_")
    folder.mkdir()
    (folder / "seed.c").write_text(SEED)
    (folder / "problem.py").write_text(
        textwrap.dedent(f"""\
        name = "bench_sum"
        evaluator = "native"
        language = "c"
        seed_file = "seed.c"
        measure = {measure!r}
        objectives = {{{OBJECTIVE[measure]!r}: "minimize"}}
        tests = {TESTS!r}
        compile_flags = ["-O2"]
        hot_functions = ["main"]  # mca: the function to analyse (it skips main by default)
        timeout_s = 60
        options = {{"timing_repeats": 3, "timing_warmups": 1, "test_timeout_s": 5}}

        def evaluate(metrics):
            return metrics
        """)
    )
    return folder


def variant(i: int) -> str:
    return SEED.replace("// EVOLVE-BLOCK-END", f"// candidate {i}\n    // EVOLVE-BLOCK-END")


async def time_measure(root: Path, measure: str, n: int) -> list[float]:
    problem = load_problem(make_problem(root, measure))
    times = []
    async with NativeEvaluator(problem) as evaluator:
        warm = await evaluator.evaluate(SEED)
        if warm.status.value != "ok":
            raise SystemExit(
                f"{measure}: the seed did not evaluate: {warm.status} {warm.artifacts}"
            )
        for i in range(n):
            start = time.perf_counter()
            result = await evaluator.evaluate(variant(i))
            times.append(time.perf_counter() - start)
            if result.status.value != "ok":
                raise SystemExit(f"{measure}: candidate {i}: {result.status} {result.artifacts}")
    return times


def bare(root: Path, n: int, callgrind: bool) -> list[float]:
    times = []
    for i in range(n):
        src, exe = root / f"bare{i}.c", root / f"bare{i}"
        src.write_text(variant(i))
        start = time.perf_counter()
        subprocess.run(["clang-19", "-O2", str(src), "-o", str(exe)], check=True)
        for stdin, expected in TESTS:
            out = subprocess.run([exe], input=stdin, capture_output=True, text=True, check=True)
            assert out.stdout == expected
            if callgrind:
                subprocess.run(
                    ["valgrind", "--tool=callgrind", f"--callgrind-out-file={root}/cg.out", exe],
                    input=stdin,
                    capture_output=True,
                    text=True,
                    check=True,
                )
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=8, help="candidates per measure")
    parser.add_argument("--measures", nargs="+", default=list(OBJECTIVE), choices=list(OBJECTIVE))
    args = parser.parse_args()
    if not shutil.which("clang-19") or not shutil.which("valgrind"):
        sys.exit("needs clang-19 and valgrind (apt-get install -y clang-19 llvm-19 valgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = statistics.median(bare(root, args.n, callgrind=False))
        base_cg = statistics.median(bare(root, args.n, callgrind=True))
        print(f"bare compile+run (no sandbox)           median {base * 1e3:8.1f} ms")
        print(f"bare compile+run+callgrind (no sandbox) median {base_cg * 1e3:8.1f} ms")
        print(f"{'measure':12} {'median ms':>10} {'evals/s':>8} {'overhead ms':>12}")
        for measure in args.measures:
            if why := measure_unavailable("c", measure):
                print(f"{measure:12} skipped: {why}")
                continue
            times = asyncio.run(time_measure(root, measure, args.n))
            median = statistics.median(times)
            reference = base_cg if measure == "callgrind" else base
            print(
                f"{measure:12} {median * 1e3:10.1f} {1 / median:8.2f} "
                f"{(median - reference) * 1e3:12.1f}"
            )


if __name__ == "__main__":
    main()
