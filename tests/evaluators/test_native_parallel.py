"""graph_parallel: the ThreadSanitizer stage refuses a racy candidate before it is timed, a
correct parallel candidate gets a speedup, and the sequential seed is correct on every graph
(against the problem's own numpy reference)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from evoforge.archive import Status
from evoforge.evaluators.native import NativeEvaluator, archer_library, read_settings
from evoforge.evaluators.native._sanitize import REPORT_CHARS, first_report
from evoforge.problems import ProblemSpecError, import_spec, load_problem

BUILTIN = Path(__file__).parents[2] / "problems" / "builtin" / "graph_parallel"
CANDIDATES = Path(__file__).parent / "native_candidates"

pytestmark = pytest.mark.skipif(
    shutil.which("clang++-19") is None or archer_library() is None,
    reason="needs clang-19 with libomp and Archer (apt-get install -y clang-19 libomp-19-dev)",
)

SMALL = """

@functools.cache
def tests():
    return _cases(["rmat 14 120000 11", "road 300 300 12"])


@functools.cache
def race_tests():
    return _cases(["rmat 10 6000 21", "road 40 40 22"])


options = {**options, "timing_repeats": 3, "timing_warmups": 0}
"""


def small_problem(tmp_path: Path) -> Path:
    """graph_parallel as built in, on smaller graphs (its generators and reference kept)."""
    folder = tmp_path / "graph_parallel"
    shutil.copytree(BUILTIN, folder, ignore=shutil.ignore_patterns("__pycache__"))
    spec = folder / "problem.py"
    spec.write_text(spec.read_text() + SMALL)
    return folder


def with_block(body: str) -> str:
    """The seed with its ``components`` function (the block's last part) replaced."""
    seed = (BUILTIN / "seed.cpp").read_text()
    new = re.sub(
        r"// label\[v\] = the smallest.*(// EVOLVE-BLOCK-END)",
        lambda m: body + m[1],
        seed,
        flags=re.S,
    )
    assert new != seed
    return new


def racy() -> str:
    """The seed with its degree count made parallel: unsynchronised ``++`` of shared slots."""
    seed = (BUILTIN / "seed.cpp").read_text()
    loop = "    for (u64 i = 0; i < m; i++) {\n        offset[src[i] + 1]++;"
    assert loop in seed
    return seed.replace(loop, "    #pragma omp parallel for\n" + loop)


def evaluate(folder: Path, *sources: str) -> list:
    async def run():
        async with NativeEvaluator(load_problem(folder)) as evaluator:
            return [await evaluator.evaluate(source) for source in sources]

    return asyncio.run(run())


@pytest.mark.slow
def test_race_is_refused_and_parallel_candidate_gets_a_speedup(tmp_path):
    folder = small_problem(tmp_path)
    parallel = with_block((CANDIDATES / "union_find_parallel.inc").read_text())
    race, good = evaluate(folder, racy(), parallel)

    assert race.status is Status.RUNTIME_ERROR
    assert "data race" in race.artifacts["error"]
    assert "WARNING: ThreadSanitizer: data race" in race.artifacts["data_race"]
    assert race.metrics["stage_reached"] == "race_check"
    assert "speedup_vs_seed" not in race.metrics  # never timed, never ranked
    assert not race.objectives

    assert good.status is Status.OK, good.artifacts
    assert good.metrics["stages_passed"] == 2
    assert good.objectives["speedup_vs_seed"] > 0
    assert good.metrics["speedup_vs_seed"] == good.objectives["speedup_vs_seed"]
    assert "speedup_vs_O3" in good.metrics and "wall_vs_seed" in good.artifacts


def test_candidates_run_on_every_core(tmp_path):
    """OMP_NUM_THREADS is the host's usable cores (the sandbox's default is 1)."""
    folder = small_problem(tmp_path)
    probe = with_block(
        "static std::vector<u32> components(u32 n, const std::vector<u32>&, "
        "const std::vector<u32>&) {\n"
        '    fprintf(stderr, "threads %d\\n", omp_get_max_threads());\n'
        "    return std::vector<u32>(n, 0);\n}\n"
    )
    (result,) = evaluate(folder, probe)
    assert result.status is Status.INCORRECT  # every vertex labelled 0: wrong, on purpose
    assert f"threads {len(os.sched_getaffinity(0))}" in result.artifacts["stderr_tail"]


def test_seed_is_correct_on_every_graph(tmp_path):
    """The seed's output equals the numpy reference's on the tests, the race tests and the
    held-out graphs (run directly: this checks the problem, not the sandbox)."""
    binary = tmp_path / "seed"
    subprocess.run(
        ["clang++-19", "-O2", "-std=c++17", "-fopenmp", BUILTIN / "seed.cpp", "-o", binary],
        check=True,
    )
    spec = import_spec(BUILTIN / "problem.py")
    cases = [*spec.tests(), *spec.race_tests(), *spec.held_out_tests()]
    assert {line.split()[0] for line, _ in cases} == {"rmat", "road"}
    for stdin, expected in cases:
        out = subprocess.run([binary], input=stdin, capture_output=True, text=True, check=True)
        assert out.stdout == expected, stdin


def test_reference_matches_a_plain_union_find():
    """The numpy reference (hooking and pointer jumping) against a textbook union-find."""
    spec = import_spec(BUILTIN / "problem.py")
    for n, src, dst in (spec.rmat(8, 300, 5), spec.road(12, 9, 6)):
        parent = list(range(n))
        for a, b in zip(src.tolist(), dst.tolist(), strict=True):
            ra, rb = _find(parent, a), _find(parent, b)
            parent[max(ra, rb)] = min(ra, rb)
        assert spec.min_labels(n, src, dst).tolist() == [_find(parent, v) for v in range(n)]


def _find(parent: list[int], v: int) -> int:
    while parent[v] != v:
        v = parent[v]
    return v


def test_stage_settings_are_checked(tmp_path):
    folder = small_problem(tmp_path)
    problem = load_problem(folder)
    settings = read_settings(problem, stage={"tests": "race_tests", "sanitize": "thread"})
    assert settings.sanitize == ("thread",) and len(settings.tests) == 2
    assert settings.thread_count == len(os.sched_getaffinity(0))
    with pytest.raises(ProblemSpecError, match="sanitize 'memory'"):
        read_settings(problem, stage={"sanitize": "memory"})
    with pytest.raises(ProblemSpecError, match="do not take flags"):
        read_settings(problem, stage={"flags": ["-O3"]})
    with pytest.raises(ProblemSpecError, match="cannot share a build"):
        read_settings(problem, stage={"sanitize": ["thread", "address"]})


RACE = """noise before
==================
WARNING: ThreadSanitizer: data race (pid=3)
  Write of size 8 at 0x7b04 by thread T1:
    #0 count candidate.cpp:5:9
SUMMARY: ThreadSanitizer: data race candidate.cpp:5:9 in count
==================
ThreadSanitizer: reported 1 warnings
"""


def test_first_report_reads_each_sanitizer_s_report():
    kind, headline, text = first_report(RACE)
    assert (kind, headline) == ("data_race", "WARNING: ThreadSanitizer: data race (pid=3)")
    assert text.startswith("==================\nWARNING") and text.endswith("in count")
    segv = "==3==ERROR: ThreadSanitizer: SEGV on unknown address 0x0 (pc 0x1)\n#0 f a.cpp:1\n"
    assert first_report(segv)[:2] == (
        "thread_sanitizer",
        "ERROR: ThreadSanitizer: SEGV on unknown address 0x0 (pc 0x1)",
    )
    ub = "a.c:3:5: runtime error: signed integer overflow: 2147483647 + 1\n"
    assert first_report(ub)[0] == "undefined_behaviour"
    assert first_report("an ordinary message on stderr\n") is None
    assert len(first_report(RACE.replace("noise", "x" * 10_000))[2]) <= REPORT_CHARS
