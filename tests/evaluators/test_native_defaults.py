"""What a native problem may leave out: ``evaluate`` (scored as measured, so the example of
docs/native.md runs as written) and ``hot_functions`` (llvm-mca analyses the EVOLVE-BLOCK's
functions, or what inlining left of them, and says which)."""

from __future__ import annotations

import asyncio
import re
import shutil
import textwrap
from pathlib import Path

import pytest

import evoforge
from evoforge.archive import Status
from evoforge.evaluators.native import NativeEvaluator
from evoforge.evaluators.native._hot import (
    block_functions,
    choose_functions,
    keep_out_of_line,
    qualified_name,
)
from evoforge.evaluators.native._jobs import compile_job
from evoforge.problems import ProblemSpecError, load_problem

NATIVE_PAGE = Path(__file__).resolve().parents[2] / "docs" / "native.md"

SEED = """\
#include <iostream>
#include <vector>
// EVOLVE-BLOCK-START
static int median(std::vector<int>& v) {
    for (size_t i = 0; i < v.size(); i++)
        for (size_t j = i + 1; j < v.size(); j++)
            if (v[j] < v[i]) std::swap(v[i], v[j]);
    return v[v.size() / 2];
}
// EVOLVE-BLOCK-END
int main() {
    int n;
    std::cin >> n;
    std::vector<int> v(n);
    for (auto& x : v) std::cin >> x;
    std::cout << median(v) << "\\n";
}
"""


def documented_native_example() -> str:
    """The first Python block of the documentation's page on native programs, as it stands."""
    found = re.search(r"```python[^\n]*\n(.*?)```", NATIVE_PAGE.read_text(), re.S)
    assert found, "docs/native.md has no ```python block"
    return found.group(1)


@pytest.fixture
def documented_problem(tmp_path: Path) -> Path:
    """The documentation's native example in a folder, with a seed its tests pass."""
    spec = documented_native_example()
    seed_file = re.search(r'seed_file = "([^"]+)"', spec)
    assert seed_file, "the documentation's example names no seed_file"
    folder = tmp_path / "documented_native"
    folder.mkdir()
    (folder / "problem.py").write_text(spec)
    (folder / seed_file.group(1)).write_text(SEED)
    return folder


def test_the_documented_example_loads_without_evaluate(documented_problem):
    assert "def evaluate" not in documented_native_example()
    problem = load_problem(documented_problem)
    assert problem.evaluator == "native"
    evaluator = NativeEvaluator(problem)
    assert evaluator._score("evaluate", {"instructions": 7.0}) == {"instructions": 7.0}


def test_a_stage_may_name_as_measured_without_importing_it(tmp_path):
    """The documentation's cascade names ``"evaluate": "as_measured"`` and imports nothing."""
    folder = tmp_path / "staged"
    folder.mkdir()
    (folder / "seed.cpp").write_text(SEED)
    (folder / "problem.py").write_text(
        documented_native_example()
        + textwrap.dedent("""\
        stages = [
            {"name": "prefilter", "kwargs": {"measure": "mca:znver4"},
             "evaluate": "as_measured"},
            {"name": "measure"},
        ]
        """)
    )
    assert [s.evaluate for s in load_problem(folder).stages] == ["as_measured", "evaluate"]


def test_a_python_problem_still_must_define_evaluate(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "seed.py").write_text("# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n")
    (folder / "problem.py").write_text('name = "plain"\nobjectives = {"x": "maximize"}\n')
    with pytest.raises(ProblemSpecError, match="evaluate: missing; define `def evaluate"):
        load_problem(folder)


def test_a_native_stage_naming_an_unknown_function_is_still_refused(tmp_path):
    folder = tmp_path / "typo"
    folder.mkdir()
    (folder / "seed.cpp").write_text(SEED)
    (folder / "problem.py").write_text(
        documented_native_example()
        + 'stages = [{"name": "quick", "evaluate": "as_mesured"}, {"name": "full"}]\n'
    )
    with pytest.raises(ProblemSpecError, match="no function 'as_mesured'"):
        load_problem(folder)


@pytest.mark.skipif(
    shutil.which("clang++-19") is None or shutil.which("valgrind") is None,
    reason="needs clang-19 and valgrind (apt-get install -y clang-19 llvm-19 valgrind)",
)
def test_the_documented_example_runs_to_an_ok_seed(documented_problem, tmp_path):
    result = evoforge.run(documented_problem, budget=3, seed=1, db=tmp_path / "documented.db")
    assert result.status == "finished", result.reason
    assert result.seed.status == Status.OK, result.seed.artifacts
    assert result.seed.metrics["instructions"] > 0


# --- llvm-mca without hot_functions ----------------------------------------------------------

MEDIAN = "_Z6medianRSt6vectorIiSaIiEE"


def test_the_functions_of_the_evolve_block_are_found():
    source = textwrap.dedent("""\
        int outside(int x) { return x; }
        // EVOLVE-BLOCK-START
        static inline long *pointer(long a) { return 0; }
        struct S { int method() { return 1; } };
        int Solver::run(int n) { return n; }
        // EVOLVE-BLOCK-END
        int main() { return outside(0); }
        """)
    assert block_functions(source, "cpp") == ("pointer", "method", "run")
    assert block_functions(SEED, "cpp") == ("median",)
    assert block_functions("fn main() {}", "rust") == ()


def test_the_evolved_functions_are_analysed_when_compiled():
    demangled = {MEDIAN: "median(std::vector<int, std::allocator<int> >&)", "main": "main"}
    chosen, note = choose_functions(demangled, [], ["median"])
    assert chosen == [MEDIAN]
    assert note == "the functions defined in the EVOLVE-BLOCK: median"


def test_an_evolved_function_inlined_into_main_leaves_main_analysed():
    """At -O2 a static function with one caller is inlined: only main has a body."""
    chosen, note = choose_functions({"main": "main"}, [], ["median"])
    assert chosen == ["main"]
    assert note.startswith("main (") and "median inlined" in note


def test_other_functions_of_the_program_come_before_main():
    demangled = {"_Z6helperi": "helper(int)", "main": "main", "_ZNSt6vectorIiE": "std::vector"}
    chosen, note = choose_functions(demangled, [], ["median"])
    assert chosen == ["_Z6helperi"] and note.startswith("helper (")


def test_named_hot_functions_win():
    demangled = {MEDIAN: "median(std::vector<int, std::allocator<int> >&)", "main": "main"}
    assert choose_functions(demangled, ["main"], ["median"])[0] == ["main"]
    assert choose_functions(demangled, ["absent"], ["median"])[0] == []


def test_a_library_template_is_not_the_program_s_own():
    """Demangled template instances carry their return type first: ``void std::...``."""
    introselect = "void std::__introselect<int*, long>(int*, int*, int*, long)"
    demangled = {"_ZSt13__introselectIPilEvT_S1_S1_T0_": introselect, "main": "main"}
    chosen, note = choose_functions(demangled, [], ["median"])
    assert chosen == ["main"], note
    assert qualified_name(introselect) == "std::__introselect<int*, long>"
    assert qualified_name("(anonymous namespace)::helper(int)") == "(anonymous namespace)::helper"


def test_the_evolved_functions_are_kept_out_of_line_for_the_estimate():
    marked = keep_out_of_line(SEED, "cpp")
    assert "[[gnu::noinline]] static int median(" in marked
    assert marked.replace("[[gnu::noinline]] ", "") == SEED
    c_source = "// EVOLVE-BLOCK-START\nstatic int f(int x) { return x; }\n// EVOLVE-BLOCK-END\n"
    assert "__attribute__((noinline)) static int f(" in keep_out_of_line(c_source, "c")
    assert keep_out_of_line("int main() { return 0; }\n", "c") == ""  # no block: nothing
    templated = (
        "// EVOLVE-BLOCK-START\ntemplate <class T> T id(T x) { return x; }\n// EVOLVE-BLOCK-END\n"
    )
    assert "template <class T> [[gnu::noinline]] T id(" in keep_out_of_line(templated, "cpp")


@pytest.mark.skipif(shutil.which("clang++-19") is None, reason="needs clang-19")
@pytest.mark.parametrize("compiles", [True, False], ids=["out-of-line", "fallback"])
def test_the_assembly_is_of_the_out_of_line_copy_where_it_compiles(tmp_path, monkeypatch, compiles):
    monkeypatch.chdir(tmp_path)
    kept = keep_out_of_line(SEED, "cpp") if compiles else "this is not C++"
    header, binary = compile_job("cpp", SEED, ["-O2"], 60, asm_cpu="znver4", asm_source=kept)
    assert header["status"] == "ok" and binary, header
    assert header["asm_out_of_line"] is compiles
    assert ("_ZL6medianRSt6vectorIiSaIiEE:" in header["asm"]) is compiles  # else inlined


def with_mca(problem: Path) -> Path:
    spec = problem / "problem.py"
    spec.write_text(
        spec.read_text()
        .replace('measure = "callgrind"', 'measure = "mca:znver4"')
        .replace('{"instructions": "minimize"}', '{"mca_cycles": "minimize"}')
    )
    return problem


@pytest.mark.slow  # two candidates, each with its seed and -O3 references: 6 compiles
@pytest.mark.skipif(
    shutil.which("clang++-19") is None or shutil.which("llvm-mca-19") is None,
    reason="needs clang-19 and llvm-mca-19 (apt-get install -y clang-19 llvm-19)",
)
def test_mca_without_hot_functions_estimates_the_evolved_function_of_every_candidate(
    documented_problem,
):
    """At -O2 clang inlines ``median`` into ``main``; the estimate must still be of
    ``median`` (not of main's input loop for one candidate and a library template for the
    next), for the seed and for a rewrite alike, so their figures compare."""
    faster = SEED.replace(
        "    for (size_t i = 0; i < v.size(); i++)\n"
        "        for (size_t j = i + 1; j < v.size(); j++)\n"
        "            if (v[j] < v[i]) std::swap(v[i], v[j]);\n",
        "    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());\n",
    ).replace("#include <vector>", "#include <vector>\n#include <algorithm>")
    assert faster != SEED

    async def both():
        async with NativeEvaluator(load_problem(with_mca(documented_problem))) as evaluator:
            return [await evaluator.evaluate(source) for source in (SEED, faster)]

    for result in asyncio.run(both()):
        assert result.status is Status.OK, result.artifacts
        analysed = result.artifacts["mca_functions"]
        assert analysed.startswith("the functions defined in the EVOLVE-BLOCK: median ("), analysed
        assert "kept out of line" in analysed
        assert list(result.artifacts["profile"].splitlines()[1:]) == [
            line for line in result.artifacts["profile"].splitlines()[1:] if "median(" in line
        ]
