"""A native cascade: llvm-mca as a cheap stage before callgrind. A candidate whose estimate is
much worse than the seed's is refused there and never measured; one that passes is."""

from __future__ import annotations

import asyncio
import shutil
import textwrap
from pathlib import Path

import pytest

from evoforge.archive import Status
from evoforge.evaluators.native import NativeEvaluator
from evoforge.problems import load_problem

pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("clang-19", "valgrind", "llvm-mca-19")),
    reason="needs clang-19, llvm-mca-19, valgrind (apt-get install -y clang-19 llvm-19 valgrind)",
)

SEED = """\
#include <stdio.h>
// EVOLVE-BLOCK-START
long total(const long *a, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) s += a[i];
    return s;
}
// EVOLVE-BLOCK-END
int main(void) {
    static long a[1000];
    long n;
    if (scanf("%ld", &n) != 1 || n > 1000) return 1;
    for (long i = 0; i < n; i++) if (scanf("%ld", &a[i]) != 1) return 2;
    printf("%ld\\n", total(a, n));
    return 0;
}
"""
# The same sums with a chain of 24 dependent multiplications per element that the compiler
# must keep (volatile asm, x86-64 as llvm-mca's target): the estimate is many times the seed's.
SLOW = SEED.replace("long s = 0;", "long s = 0, t = 3;").replace(
    "s += a[i];",
    '{ s += a[i]; __asm__ volatile("' + "imulq %0, %0\\n\\t" * 24 + '" : "+r"(t)); }',
)


def make_problem(tmp_path: Path, threshold: float) -> Path:
    folder = tmp_path / "problem"
    folder.mkdir()
    (folder / "seed.c").write_text(SEED)
    (folder / "problem.py").write_text(
        textwrap.dedent(f"""\
        from evoforge.evaluators.native import as_measured

        name = "sum_cascade"
        evaluator = "native"
        language = "c"
        seed_file = "seed.c"
        measure = "callgrind"
        objectives = {{"instructions": "minimize"}}
        tests = [("3\\n1 2 3\\n", "6\\n"), ("4\\n-5 9 100 7\\n", "111\\n")]
        hot_functions = ["total"]
        timeout_s = 60
        stages = [
            {{"name": "prefilter", "kwargs": {{"measure": "mca:znver4"}},
              "evaluate": "as_measured",
              "threshold": {{"metric": "speedup_vs_seed", "min": {threshold}}}}},
            {{"name": "measure"}},
        ]
        held_out = [{{"name": "held_out", "kwargs": {{"tests": "bigger"}}}}]
        bigger = [(f"900\\n{{' '.join(['2'] * 900)}}\\n", "1800\\n")]
        evaluate = evaluate_held_out = as_measured
        """)
    )
    return folder


def evaluate(folder: Path, *sources: str) -> list:
    async def run():
        async with NativeEvaluator(load_problem(folder)) as evaluator:
            return [await evaluator.evaluate(source) for source in sources]

    return asyncio.run(run())


def test_a_much_worse_estimate_is_never_measured(tmp_path):
    seed, slow = evaluate(make_problem(tmp_path, 0.8), SEED, SLOW)

    assert seed.status is Status.OK, seed.artifacts
    assert seed.metrics["stage_reached"] == "measure"
    assert seed.objectives["instructions"] > 0
    assert seed.metrics["speedup_vs_seed"] == pytest.approx(1.0)  # callgrind: deterministic
    assert seed.metrics["prefilter.speedup_vs_seed"] == pytest.approx(1.0)
    assert seed.metrics["mca_cycles"] > 0

    assert slow.status is Status.INCORRECT
    assert slow.metrics["stage_reached"] == "prefilter"
    assert slow.metrics["speedup_vs_seed"] < 0.8
    assert "instructions" not in slow.metrics  # callgrind never ran
    assert "speedup_vs_seed" in slow.artifacts["error"] and "threshold" in slow.artifacts["error"]
    assert "not run: measure" in slow.artifacts["cascade"]


def test_a_candidate_within_the_threshold_is_measured(tmp_path):
    (slow,) = evaluate(make_problem(tmp_path, 0.01), SLOW)
    assert slow.status is Status.OK, slow.artifacts
    assert slow.metrics["stage_reached"] == "measure"
    assert slow.metrics["prefilter.speedup_vs_seed"] < 0.8
    assert slow.objectives["instructions"] > 0


def test_held_out_stages_use_their_own_tests_not_the_cascade(tmp_path):
    async def run():
        async with NativeEvaluator(load_problem(make_problem(tmp_path, 0.8))) as evaluator:
            return await evaluator.evaluate(SEED), await evaluator.evaluate_held_out(SLOW)

    seed, held = asyncio.run(run())
    assert held is not None and held.status is Status.OK, held and held.artifacts
    assert "stage_reached" not in held.metrics or held.metrics["stage_reached"] == "held_out"
    assert "mca_cycles" not in held.metrics  # the prefilter is the cascade's, not held-out's
    assert held.metrics["instructions"] > seed.metrics["instructions"]  # 900 numbers, not 7


def test_a_stage_whose_measure_this_host_lacks_is_skipped_not_failed(tmp_path, monkeypatch, caplog):
    # Without llvm-mca the prefilter would miss its threshold for every candidate, though
    # callgrind, which ranks them, is there.
    import evoforge.evaluators.native._evaluator as native

    real = native.measure_unavailable
    monkeypatch.setattr(
        native,
        "measure_unavailable",
        lambda language, measure: (
            "llvm-mca-19 is not installed" if measure.startswith("mca") else real(language, measure)
        ),
    )
    (slow,) = evaluate(make_problem(tmp_path, 0.8), SLOW)
    assert slow.status is Status.OK, slow.artifacts
    assert slow.metrics["stage_reached"] == "measure" and slow.objectives["instructions"] > 0
    assert "'prefilter' skipped" in slow.artifacts["skipped_stages"]
    assert "llvm-mca-19 is not installed" in caplog.text
