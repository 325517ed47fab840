"""The offline mutation model on C and C++: answers apply exactly, stay in the blocks, are
reproducible, and enough of them compile (and some stay correct) for a search to progress."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from evoforge.evolve.edits import apply_edit
from evoforge.evolve.offline._clike import detect_language, program_for
from evoforge.evolve.offline._mutator import C_WEIGHTS, NOTHING_TO_CHANGE, mutate
from evoforge.problems._blocks import frozen_parts

CPP = """\
#include <cstdio>
#include <vector>
static const long long LIMIT = 1000000LL;

// EVOLVE-BLOCK-START
static bool is_prime(long k) {
    for (long d = 2; d < k; d++)
        if (k % d == 0) return false;
    return k >= 2;
}
// EVOLVE-BLOCK-END

int main() {
    int n;
    if (std::scanf("%d", &n) != 1) return 1;
    std::vector<long long> a(n);
    for (auto &x : a) std::scanf("%lld", &x);
    // EVOLVE-BLOCK-START
    long long count = 0;
    long primes = 0;
    double scale = 0.5;
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++)
            if (a[i] > a[j] && a[j] < LIMIT) count++;
        if (is_prime(i)) primes = primes + 1;
    }
    count += (long long)(scale * 0);
    // EVOLVE-BLOCK-END
    std::printf("%lld %ld\\n", count, primes);
    return 0;
}
"""

C = """\
#include <stdio.h>
int main(void) {
    int n, new = 0;
    if (scanf("%d", &n) != 1) return 1;
    /* EVOLVE-BLOCK-START */
    long total = 0;
    for (int i = 1; i <= n; i++) {
        if (i % 3 == 0) total += i;
        new = new + 2;
    }
    /* EVOLVE-BLOCK-END */
    printf("%ld %d\\n", total, new);
    return 0;
}
"""

PARENTS = {"cpp": CPP, "c": C}
CLANG = {"cpp": "clang++-19", "c": "clang-19"}


OMP = """\
#include <cstdio>
#include <omp.h>
// EVOLVE-BLOCK-START
static long count(const int *a, long n, long *hist) {
    long total = 0;
    for (long i = 0; i < n; i++) {
        hist[a[i] & 7]++;
        total += a[i];
    }
    return total;
}
// EVOLVE-BLOCK-END
"""


def child(parent: str, answer: str) -> str:
    source = apply_edit(parent, answer, tolerant=False).source  # SEARCH matches exactly
    assert frozen_parts(source) == frozen_parts(parent)
    assert source != parent
    return source


def only(name: str) -> dict[str, float]:
    return {name: 1.0}


def test_language_is_read_from_the_marker_comments() -> None:
    assert detect_language(CPP) == "cpp"
    assert detect_language(C) == "c"
    assert detect_language("# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n") == "python"
    assert program_for(C).language == "c"  # ``new`` is a name in C, a keyword in C++


@settings(max_examples=80, deadline=None)
@given(name=st.sampled_from(sorted(PARENTS)), seed=st.integers(0, 2**63))
def test_answers_apply_exactly_and_stay_in_the_blocks(name: str, seed: int) -> None:
    parent = PARENTS[name]
    answer = mutate(parent, [], np.random.default_rng(seed))
    assert 1 <= answer.count("<<<<<<< SEARCH") <= 3
    child(parent, answer)


def test_same_seed_same_answer_and_seeds_differ() -> None:
    answers = [mutate(CPP, [], np.random.default_rng(s)) for s in (4, 4, 5, 6, 7)]
    assert answers[0] == answers[1]
    assert len(set(answers)) >= 3


@pytest.mark.parametrize("operator", sorted(set(C_WEIGHTS) - {"crossover"}))
def test_each_operator_alone_yields_applicable_edits(operator: str) -> None:
    parent = OMP if operator.startswith("omp_") else CPP  # OpenMP rewrites need OpenMP
    for seed in range(12):
        child(parent, mutate(parent, [], np.random.default_rng(seed), weights=only(operator)))


def test_constants_keep_their_suffix_and_kind() -> None:
    parent = (
        "// EVOLVE-BLOCK-START\nlong long x = 1LL << 40;\nfloat y = 2.5f;\n// EVOLVE-BLOCK-END\n"
    )
    seen_int = seen_float = False
    for seed in range(40):
        source = child(
            parent, mutate(parent, [], np.random.default_rng(seed), weights=only("constant"))
        )
        x = source.split("x = ", 1)[1].split(" <<", 1)[0]
        y = source.split("y = ", 1)[1].split(";", 1)[0]
        assert x.endswith("LL") and x[:-2].isdigit()
        assert y.endswith("f") and "." in y and float(y[:-1]) > 0
        seen_int |= x != "1LL"
        seen_float |= y != "2.5f"
    assert seen_int and seen_float


def rewrites(operator: str, parent: str = CPP, seeds: int = 30) -> set[str]:
    return {
        child(parent, mutate(parent, [], np.random.default_rng(s), weights=only(operator)))
        for s in range(seeds)
    }


def test_branchless_turns_a_counted_branch_into_arithmetic_and_a_select() -> None:
    children = rewrites("branchless")
    assert any("count += (a[i] > a[j] && a[j] < LIMIT);" in c for c in children)
    assert any("primes = (is_prime(i)) ? primes + 1 : primes;" in c for c in children)


def test_operand_swap_keeps_calls_in_place() -> None:
    children = rewrites("swap_operands")
    assert children == {CPP.replace("a[i] > a[j] && a[j] < LIMIT", "a[j] < LIMIT && a[i] > a[j]")}


def test_loop_bound_tightens_counting_loops_only() -> None:
    children = rewrites("loop_bound")
    assert any("for (long d = 2; d * d <= k; d++)" in c for c in children)
    assert any("for (int j = i + 1; j <= n / 2; j++)" in c for c in children)
    assert not any("auto &x" not in c for c in children)  # frozen code untouched


def test_loop_pragma_goes_on_its_own_line_above_a_loop_once() -> None:
    for source in rewrites("loop_pragma"):
        lines = source.split("\n")
        at = next(i for i, line in enumerate(lines) if "#pragma clang loop" in line)
        assert lines[at + 1].lstrip().startswith("for (")
        assert lines[at].startswith(
            lines[at + 1][: len(lines[at + 1]) - len(lines[at + 1].lstrip())]
        )
        for seed in range(8):  # never a second pragma on the same loop
            again = mutate(source, [], np.random.default_rng(seed), weights=only("loop_pragma"))
            if again != NOTHING_TO_CHANGE:
                pairs = zip(lines2 := child(source, again).split("\n"), lines2[1:], strict=False)
                assert not any("#pragma" in x and "#pragma" in y for x, y in pairs)


def test_openmp_pragmas_go_above_loops_and_updates_of_an_openmp_program() -> None:
    loops = rewrites("omp_parallel", OMP)
    assert {c.split("\n")[5].strip() for c in loops} <= {
        "#pragma omp parallel for",
        "#pragma omp parallel for schedule(static)",
        "#pragma omp parallel for schedule(dynamic, 4096)",
    }
    assert all(c.split("\n")[6].lstrip().startswith("for (") for c in loops)
    above: set[str] = set()
    for source in rewrites("omp_atomic", OMP):
        lines = source.split("\n")
        atomic = [i for i, line in enumerate(lines) if line == "        #pragma omp atomic"]
        assert atomic and all(lines[i + 1].strip() != "#pragma omp atomic" for i in atomic)
        above |= {lines[i + 1].strip() for i in atomic}
    assert above == {"hist[a[i] & 7]++;", "total += a[i];"}  # updates inside the loop only


def test_openmp_rewrites_need_an_openmp_program() -> None:
    plain = OMP.replace("#include <omp.h>\n", "")
    for seed in range(10):
        answer = mutate(plain, [], np.random.default_rng(seed), weights=only("omp_parallel"))
        assert answer == NOTHING_TO_CHANGE
        answer = mutate(plain, [], np.random.default_rng(seed), weights=only("omp_atomic"))
        assert answer == NOTHING_TO_CHANGE


def test_crossover_takes_constants_from_an_inspiration() -> None:
    other = CPP.replace("double scale = 0.5;", "double scale = 0.75;")
    for seed in range(10):
        answer = mutate(CPP, [other], np.random.default_rng(seed), weights=only("crossover"))
        assert "double scale = 0.75;" in child(CPP, answer)


def test_a_block_with_nothing_to_change_says_so() -> None:
    parent = "int main() {\n    // EVOLVE-BLOCK-START\n    // EVOLVE-BLOCK-END\n    return 0;\n}\n"
    assert mutate(parent, [], np.random.default_rng(0)) == NOTHING_TO_CHANGE


@pytest.mark.parametrize("name", sorted(PARENTS))
def test_a_fraction_compiles_and_some_stay_correct(name: str, tmp_path: Path) -> None:
    compiler = shutil.which(CLANG[name])
    if compiler is None:
        pytest.skip(f"{CLANG[name]} is not installed (apt-get install clang-19)")
    parent = PARENTS[name]

    def output(source: str, stem: str) -> str | None:
        src = tmp_path / f"{stem}.{name}"
        src.write_text(source)
        built = subprocess.run(
            [
                compiler,
                "-O1",
                "-w",
                "-x",
                "c++" if name == "cpp" else "c",
                str(src),
                "-o",
                str(tmp_path / stem),
            ],
            capture_output=True,
        )
        if built.returncode:
            return None
        try:
            run = subprocess.run(
                [tmp_path / stem],
                input="6\n5 1 4 2 3 0\n",
                capture_output=True,
                text=True,
                timeout=2,
            )
        except subprocess.TimeoutExpired:
            return ""  # compiled, but loops (a changed loop bound): not correct
        return run.stdout

    expected = output(parent, "seed")
    assert expected
    outputs = [
        output(child(parent, mutate(parent, [], np.random.default_rng(s))), f"m{s}")
        for s in range(12)
    ]
    compiled = [o for o in outputs if o is not None]
    assert len(compiled) >= 6  # most mutants compile
    assert expected in compiled  # at least one changed program is still correct
