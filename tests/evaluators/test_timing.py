"""CPU timing: callgrind counts, interleaved wall-clock comparison, the python option."""

from __future__ import annotations

import asyncio
import sys
import textwrap
import time

import pytest

from evoforge.evaluators import Status
from evoforge.evaluators.python._evaluator import PythonEvaluator
from evoforge.evaluators.timing._cpu import (
    CallgrindError,
    callgrind_instructions,
    unmeasurable,
    valgrind_unavailable,
)
from evoforge.evaluators.timing._lines import COUNTS_FILE, line_profile, read_counts
from evoforge.evaluators.timing._wall import compare, interleaved_wall, iqr
from evoforge.problems import ProblemSpecError, load_problem

needs_valgrind = pytest.mark.skipif(bool(valgrind_unavailable()), reason=valgrind_unavailable())
PYTHON_ENV = {"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"}


# --- callgrind ---------------------------------------------------------------------------------


@needs_valgrind
def test_callgrind_counts_are_exactly_repeatable_and_grow_with_work(tmp_path):
    def count(n: int) -> int:
        argv = [sys.executable, "-S", "-c", f"sum(i * i for i in range({n}))"]
        return callgrind_instructions(argv, cwd=tmp_path, env=PYTHON_ENV, timeout_s=120)

    first, second = count(1000), count(1000)
    assert first == second
    assert count(20000) > first + 19000 * 10  # at least ten instructions per extra term


@needs_valgrind
def test_callgrind_reports_a_failing_program(tmp_path):
    argv = [sys.executable, "-S", "-c", "raise SystemExit(3)"]
    with pytest.raises(CallgrindError, match="exited with code 3 under callgrind"):
        callgrind_instructions(argv, cwd=tmp_path, env=PYTHON_ENV, timeout_s=120)


@needs_valgrind
def test_callgrind_kills_a_program_that_overruns(tmp_path):
    argv = [sys.executable, "-S", "-c", "while True: pass"]
    with pytest.raises(CallgrindError, match="did not finish within 0.5 s") as error:
        callgrind_instructions(argv, cwd=tmp_path, env=PYTHON_ENV, timeout_s=0.5)
    assert error.value.overran


def test_callgrind_says_why_when_valgrind_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "valgrind is not installed" in valgrind_unavailable()
    with pytest.raises(CallgrindError, match="valgrind is not installed"):
        callgrind_instructions(["true"], cwd=tmp_path)


# --- interleaved wall time ---------------------------------------------------------------------


def _work(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def test_interleaved_wall_finds_a_known_two_fold_difference():
    # Timed by this thread's CPU clock: on a busy machine (CI's 2 cores, other tests) wall time
    # includes waiting for a core, which can hide a two-fold difference; the work's CPU time
    # cannot. What is checked is the interleaving and the statistics, not the clock.
    result = interleaved_wall(
        lambda: _work(40_000), lambda: _work(80_000), repeats=10, timer=time.thread_time
    )
    assert 1.5 < result.speedup < 2.7, result
    assert result.significant
    assert len(result.a_s) == len(result.b_s) == 10
    assert result.median_a_s < result.median_b_s


def test_runs_alternate_and_warmups_are_not_counted():
    calls: list[str] = []
    clock = iter(range(1000))
    result = interleaved_wall(
        lambda: calls.append("a"),
        lambda: calls.append("b"),
        repeats=3,
        warmups=2,
        timer=lambda: float(next(clock)),
    )
    assert calls == ["a", "b"] * 5
    assert result.a_s == result.b_s == (1.0, 1.0, 1.0)  # every call spans one clock tick


def test_equal_programs_are_not_a_significant_improvement():
    same = compare([1.0, 1.1, 0.9, 1.0, 1.05], [1.0, 1.1, 0.9, 1.0, 1.05])
    assert same.speedup == 1.0 and not same.significant
    noisy = compare([1.0, 0.5, 1.5, 1.0], [1.05, 1.6, 0.55, 1.02])  # +3 % within large noise
    assert noisy.speedup > 1.0 and not noisy.significant
    assert noisy.threshold > 0.03
    slower = compare([2.0, 2.0, 2.0], [1.0, 1.0, 1.0])
    assert slower.speedup == 0.5 and not slower.significant


def test_medians_and_iqr_are_the_textbook_ones():
    result = compare([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 4.0, 6.0, 8.0, 10.0])
    assert (result.median_a_s, result.median_b_s) == (3.0, 6.0)
    assert (result.iqr_a_s, result.iqr_b_s) == (2.0, 4.0) == (iqr([1, 2, 3, 4, 5]), 4.0)
    assert result.speedup == 2.0 and result.stderr == 0.0 and result.significant


def test_self_timed_runs_must_return_seconds():
    with pytest.raises(ValueError, match="must return its duration in seconds"):
        interleaved_wall(lambda: None, lambda: 1.0, repeats=3, self_timed=True)
    with pytest.raises(ValueError, match="repeats must be at least 3"):
        interleaved_wall(lambda: None, lambda: None, repeats=2)


# --- the python evaluator's cpu_timing option ----------------------------------------------------

SPEC = """
name = "sum_of_squares"
objectives = {objectives!r}
preload = []
timeout_s = 5
memory_mb = 512
options = {options!r}

def evaluate(output):
    ok = output == 333328333350000
    return {{"correct": ok, "score": 1.0}} if ok else {{"correct": False, "error": "wrong sum"}}
"""
SEED = """
# EVOLVE-BLOCK-START
def main():
    s = 0
    for i in range(100000):
        s += i * i
    return s
# EVOLVE-BLOCK-END
"""
CLOSED_FORM = "def main():\n    n = 100000\n    return (n - 1) * n * (2 * n - 1) // 6\n"


def _problem(tmp_path, objectives, options):
    (tmp_path / "problem.py").write_text(SPEC.format(objectives=objectives, options=options))
    (tmp_path / "seed.py").write_text(SEED)
    return load_problem(tmp_path)


def _evaluate(problem, *sources):
    async def go():
        async with PythonEvaluator(problem) as evaluator:
            return [await evaluator.evaluate(textwrap.dedent(s)) for s in sources]

    return asyncio.run(go())


@needs_valgrind
@pytest.mark.slow
def test_callgrind_option_measures_instructions_of_the_entry_alone(tmp_path):
    problem = _problem(
        tmp_path,
        {"instructions": "minimize", "score": "maximize"},
        {"cpu_timing": "callgrind"},
    )
    loop, closed, wrong = _evaluate(
        problem, problem.seed_source, CLOSED_FORM, "def main():\n    return 5\n"
    )
    assert loop.status is Status.OK and closed.status is Status.OK, (loop, closed)
    assert loop.objectives["instructions"] > 100_000 * 50  # a Python loop: ~700 per step
    assert closed.objectives["instructions"] < 20_000  # one expression, no loop
    assert (
        loop.metrics["instructions_total"] - loop.metrics["instructions_baseline"]
        == (loop.metrics["instructions"])
    )
    assert loop.device["cpu_timing"] == "callgrind" and loop.device["valgrind"]
    assert loop.timings["cpu_timing_s"] > 0
    assert wrong.status is Status.INCORRECT and "instructions" not in wrong.metrics
    # where the work is, for the next prompt: the loop's two lines, by times executed
    head, first, second, *_ = loop.artifacts["profile"].splitlines()
    assert "in one call of main()" in head
    assert "100,001" in first and "for i in range(100000):" in first
    assert "100,000" in second and "s += i * i" in second
    assert "return (n - 1)" in closed.artifacts["profile"]


def test_wall_option_compares_with_the_seed_program(tmp_path):
    problem = _problem(
        tmp_path,
        {"score": "maximize", "wall_speedup": "maximize"},
        {"cpu_timing": "wall", "cpu_timing_repeats": 5, "cpu_timing_warmups": 1},
    )
    (closed,) = _evaluate(problem, CLOSED_FORM)
    assert closed.status is Status.OK, closed
    assert closed.metrics["wall_s"] < closed.metrics["wall_seed_s"]
    assert closed.objectives["wall_speedup"] > 10 and closed.metrics["wall_significant"]
    assert closed.device["cpu_timing"] == "wall" and closed.device["device_kind"] == "cpu"


@needs_valgrind
def test_a_timing_objective_that_cannot_be_measured_fails_the_candidate(tmp_path):
    problem = _problem(
        tmp_path,
        {"instructions": "minimize"},
        {"cpu_timing": "callgrind", "cpu_timing_timeout_s": 0.2},
    )
    (result,) = _evaluate(problem, CLOSED_FORM)
    assert result.status is Status.TIMEOUT
    assert "cpu timing (callgrind) failed" in result.artifacts["error"]
    assert result.objectives == {}


def test_without_the_option_nothing_is_timed(tmp_path):
    problem = _problem(tmp_path, {"score": "maximize"}, {})
    (result,) = _evaluate(problem, CLOSED_FORM)
    assert result.status is Status.OK
    assert "cpu_timing_s" not in result.timings and "instructions" not in result.metrics


def test_bad_option_and_missing_valgrind_are_reported(tmp_path, monkeypatch):
    problem = _problem(tmp_path, {"instructions": "minimize"}, {"cpu_timing": "perf"})
    with pytest.raises(ProblemSpecError, match=r"options\['cpu_timing'\]: found 'perf'"):
        unmeasurable(problem)
    problem = _problem(tmp_path, {"instructions": "minimize"}, {"cpu_timing": "callgrind"})
    monkeypatch.setenv("PATH", str(tmp_path))
    assert unmeasurable(problem) == {
        "instructions": "valgrind is not installed (e.g. `apt-get install valgrind`)"
    }


def test_a_line_profile_ranks_lines_by_count_and_ignores_a_tampered_file(tmp_path):
    source = "def main():\n    x = 0\n    for i in range(3):\n        x += i\n    return x\n"
    profile = line_profile(source, {2: 1, 3: 4, 4: 3, 5: 1}, "main", top=2)
    head, first, second = profile.splitlines()
    assert "main()" in head
    assert first.split() == ["4", "44.4%", "line", "3:", "for", "i", "in", "range(3):"]
    assert second.split()[:4] == ["3", "33.3%", "line", "4:"]
    assert line_profile(source, {}, "main") == ""
    (tmp_path / COUNTS_FILE).write_text('["not", "counts"]')  # the candidate wrote it
    assert read_counts(tmp_path) is None
    (tmp_path / COUNTS_FILE).write_text('{"3": 4, "9": 0}')
    assert read_counts(tmp_path) == {3: 4}
