"""Adapters: KernelBench task files and OpenEvolve folders become problem folders, unmodified.

These tests need no torch and run no candidate: they check what the adapters write. Running
the adapted problems is tested with their evaluators (tests/evaluators/test_adapted_*.py).
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from evoforge.evolve import ConfigError, resolve
from evoforge.problems import KERNEL_SUITE, ProblemSpecError, find_blocks, load_problem
from evoforge.problems.adapters import adapt, problem_adapters
from tests.problems.formats import (
    ADD_ON_CUDA,
    ADD_TRITON_SOLUTION,
    CONFIG,
    LITERAL_KEY,
    RELU,
    SUM_REDUCTION,
    write_level1,
    write_openevolve,
)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Generated folders go to a fresh cache per test."""
    monkeypatch.setenv("EVOFORGE_CACHE", str(tmp_path / "cache"))


# --- KernelBench --------------------------------------------------------------------------


def test_a_kernelbench_task_file_is_a_problem_as_it_is(tmp_path):
    level1 = write_level1(tmp_path / "level1")
    task = level1 / "19_ReLU.py"
    before = task.read_bytes()
    adapted = adapt(task, target="triton")
    assert adapted is not None and adapted.adapter == "kernelbench" and not adapted.batch
    (problem,) = adapted.problems
    assert task.read_bytes() == before  # unmodified
    assert problem.name == "kb_19_relu_triton"
    assert problem.evaluator == "triton"
    assert [o.name for o in problem.objectives] == ["speedup_vs_eager", "speedup_vs_compile"]
    folder = problem.spec_path.parent
    assert (folder / "task.py").read_bytes() == before  # the reference, byte for byte
    assert folder.is_relative_to(tmp_path / "cache")
    assert problem.options["task_file"] == "task.py"
    assert "get_inputs" in problem.description and "batch_size = 4096" in problem.description


def test_the_written_seed_is_the_reference_renamed_inside_one_block(tmp_path):
    task = write_level1(tmp_path / "level1") / "47_Sum_reduction_over_a_dimension.py"
    (problem,) = adapt(task, target="triton").problems
    seed = problem.seed_source
    (block,) = find_blocks(seed)
    inside = seed[block.start : block.end]
    assert "class ModelNew(nn.Module)" in inside and "super(ModelNew, self)" in inside
    assert "torch.sum(x, dim=self.dim, keepdim=True)" in inside  # the reference's own code
    tree = ast.parse(seed)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    assert defined == {"ModelNew"}  # no Model, no input functions: the runner owns those
    assert "import triton" in seed and "import triton.language as tl" in seed


def test_a_cuda_target_declares_the_cuda_evaluator_without_triton_imports(tmp_path):
    task = write_level1(tmp_path / "level1") / "19_ReLU.py"
    (problem,) = adapt(task, target="cuda").problems
    assert problem.evaluator == "cuda" and problem.name == "kb_19_relu_cuda"
    assert "import triton" not in problem.seed_source
    assert "load_inline" in problem.seed_source  # the advice in the block


def test_no_target_means_triton_and_says_so(tmp_path):
    adapted = adapt(write_level1(tmp_path / "l") / "19_ReLU.py")
    assert adapted.problems[0].evaluator == "triton"
    assert any("no --target given: triton" in note for note in adapted.notes)


def test_an_unknown_target_is_an_error_naming_the_targets(tmp_path):
    with pytest.raises(ProblemSpecError, match=r"'metal' is not a target of kernelbench"):
        adapt(write_level1(tmp_path / "l") / "19_ReLU.py", target="metal")


def test_a_folder_of_tasks_is_a_batch_in_kernelbench_order(tmp_path):
    level1 = write_level1(tmp_path / "level1")
    (level1 / "2_Other.py").write_text(textwrap.dedent(RELU))
    (level1 / "notes.py").write_text("x = 1\n")  # not a task: left alone
    adapted = adapt(level1, target="triton")
    assert adapted.batch
    assert [p.name for p in adapted.problems] == [
        "kb_2_other_triton",
        "kb_19_relu_triton",
        "kb_23_softmax_triton",
        "kb_47_sum_reduction_over_a_dimension_triton",
    ]


def test_a_given_seed_without_markers_evolves_as_a_whole(tmp_path):
    task = tmp_path / "add.py"
    task.write_text(textwrap.dedent(ADD_ON_CUDA))
    seed = tmp_path / "solution.py"
    seed.write_text(textwrap.dedent(ADD_TRITON_SOLUTION))
    adapted = adapt(task, target="triton", seed_file=seed)
    (problem,) = adapted.problems
    (block,) = find_blocks(problem.seed_source)
    assert problem.seed_source[block.start : block.end].strip() == seed.read_text().strip()
    assert any("seed(s) from given files" in note for note in adapted.notes)


def test_seeds_next_to_the_tasks_are_found_by_target(tmp_path):
    level1 = write_level1(tmp_path / "level1")
    (level1 / "seeds" / "triton").mkdir(parents=True)
    solution = "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    pass\n"
    (level1 / "seeds" / "triton" / "19_ReLU.py").write_text(solution)
    problems = {p.name: p for p in adapt(level1, target="triton").problems}
    assert "class ModelNew(nn.Module):\n    pass" in problems["kb_19_relu_triton"].seed_source
    assert "torch.softmax" in problems["kb_23_softmax_triton"].seed_source  # written one


def test_a_seed_file_must_define_model_new_and_fits_one_task_only(tmp_path):
    level1 = write_level1(tmp_path / "level1")
    wrong = tmp_path / "wrong.py"
    wrong.write_text("x = 1\n")
    with pytest.raises(ProblemSpecError, match="defines no class ModelNew"):
        adapt(level1 / "19_ReLU.py", seed_file=wrong)
    with pytest.raises(ProblemSpecError, match="a seed file applies to one task"):
        adapt(level1, seed_file=wrong)


def test_the_same_task_adapts_to_the_same_folder(tmp_path):
    task = write_level1(tmp_path / "level1") / "19_ReLU.py"
    first = adapt(task).problems[0].spec_path
    spec = first.read_text()
    assert adapt(task).problems[0].spec_path == first and first.read_text() == spec
    task.write_text(task.read_text().replace("dim = 393216", "dim = 1000"))
    assert adapt(task).problems[0].spec_path != first  # changed task: another folder


def test_the_builtin_kernel_suite_is_a_batch_of_nine_with_naive_seeds():
    resolved = resolve("kernel_suite", target="triton")
    assert resolved.batch and len(resolved.problems) == 9
    for problem in resolved.problems:
        assert "@triton.jit" in problem.seed_source  # a naive kernel, not the reference
        task = (problem.spec_path.parent / "task.py").read_text()
        assert "def get_inputs_small" in task  # CI shapes for the interpreter
    assert {p.stem for p in KERNEL_SUITE.glob("*.py")} == {
        p.stem for p in (KERNEL_SUITE / "seeds" / "triton").glob("*.py")
    }


def test_pallas_suite_resolves_to_registered_problems():
    resolved = resolve("pallas_suite")
    assert resolved.batch and all(p.evaluator == "tpu" for p in resolved.problems)
    assert len(resolved.problems) >= 7


# --- resolution -----------------------------------------------------------------------------


def test_target_and_seed_file_are_refused_for_evoforge_problems(tmp_path):
    with pytest.raises(ConfigError, match="--target triton applies to KernelBench task files"):
        resolve("circle_packing", target="triton")


def test_an_unknown_folder_says_what_would_have_been_recognised(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="OpenEvolve folder .initial_program"):
        resolve(str(tmp_path / "empty"))


def test_an_unknown_name_lists_problems_and_suites():
    with pytest.raises(ConfigError, match=r"suites: kernel_suite, pallas_suite"):
        resolve("no_such_problem")


def test_builtin_adapters_are_registered_in_order():
    assert list(problem_adapters())[:2] == ["kernelbench", "openevolve"]


# --- OpenEvolve -----------------------------------------------------------------------------


def test_an_openevolve_folder_is_a_problem_of_the_openevolve_evaluator(tmp_path):
    folder = write_openevolve(tmp_path / "minimize")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    adapted = adapt(folder)
    assert adapted.adapter == "openevolve"
    (problem,) = adapted.problems
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # unmodified
    assert problem.evaluator == "openevolve"
    assert [o.name for o in problem.objectives] == ["fitness"]  # OpenEvolve's score
    assert problem.options["openevolve_dir"] == str(folder)
    assert problem.timeout_s == 60.0
    # OpenEvolve's cascade: stage2 runs only past the first threshold (the evaluator's)
    assert [(s.name, s.kwargs["function"]) for s in problem.stages] == [
        ("stage1", "evaluate_stage1"),
        ("stage2", "evaluate_stage2"),
    ]
    assert all(s.threshold is None for s in problem.stages)
    assert problem.options["cascade_thresholds"] == [0.5, 0.75]


def test_the_config_is_mapped_and_the_rest_reported_as_ignored(tmp_path):
    adapted = adapt(write_openevolve(tmp_path / "minimize"))
    (problem,) = adapted.problems
    defaults = problem.run_defaults
    assert defaults["budget"] == 41 and defaults["seed"] == 7 and defaults["workers"] == 2
    assert defaults["islands"] == {"count": 3}
    assert defaults["prompts"] == {"top_programs": 3}
    assert [m["model"] for m in defaults["models"]] == [
        "openai/llama3.1-8b",
        "openai/llama-4-scout",
    ]
    assert [m["weight"] for m in defaults["models"]] == [0.8, 0.2]
    assert all(m["api_base"] == "https://llm.example.invalid/v1" for m in defaults["models"])
    assert defaults["modes"]["rewrite"] == 0.0  # allow_full_rewrites: false
    assert problem.options["prompts"]["system"].endswith("costs $$0 to try.")  # $ escaped
    notes = "\n".join(adapted.notes)
    for ignored in ("checkpoint_interval", "llm.top_p", "database.population_size"):
        assert ignored in notes.split("ignored", 1)[1]
    assert "llm.api_key (a key written in the file is never read or stored" in notes


def test_a_literal_api_key_is_never_written_anywhere(tmp_path):
    adapted = adapt(write_openevolve(tmp_path / "minimize"))
    folder = adapted.problems[0].spec_path.parent
    for path in folder.rglob("*"):
        if path.is_file():
            assert LITERAL_KEY not in path.read_text()
    assert LITERAL_KEY not in "\n".join(adapted.notes)
    assert "api_key_env" not in str(adapted.problems[0].run_defaults)


def test_an_api_key_given_as_an_environment_variable_is_named_not_read(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_OE_KEY", "sk-secret-value")
    config = CONFIG.replace(f'"{LITERAL_KEY}"', '"${MY_OE_KEY}"')
    (problem,) = adapt(write_openevolve(tmp_path / "m", config=config)).problems
    assert {m["api_key_env"] for m in problem.run_defaults["models"]} == {"MY_OE_KEY"}
    assert "sk-secret-value" not in problem.spec_path.read_text()


def test_without_combined_score_the_objective_is_openevolves_fitness(tmp_path):
    evaluator = "def evaluate(program_path):\n    return {'accuracy': 1.0}\n"
    folder = write_openevolve(tmp_path / "f", config=None, **{"evaluator.py": evaluator})
    adapted = adapt(folder)
    (problem,) = adapted.problems
    assert [o.name for o in problem.objectives] == ["fitness"]
    assert problem.stages == ()  # no evaluate_stage1: one evaluate() call
    assert problem.run_defaults == {}
    assert any("combined_score when returned, else the mean" in note for note in adapted.notes)


def test_a_third_stage_runs_only_with_a_second_threshold(tmp_path):
    evaluator = (
        "def evaluate_stage1(p):\n    return {'a': 1.0}\n"
        "def evaluate_stage2(p):\n    return {'a': 1.0}\n"
        "def evaluate_stage3(p):\n    return {'a': 1.0}\n"
    )
    one = CONFIG.replace("cascade_thresholds: [0.5, 0.75]", "cascade_thresholds: [0.5]")
    adapted = adapt(write_openevolve(tmp_path / "a", config=one, **{"evaluator.py": evaluator}))
    assert [s.name for s in adapted.problems[0].stages] == ["stage1", "stage2"]
    assert any("evaluate_stage3 is not run" in note for note in adapted.notes)
    two = write_openevolve(tmp_path / "b", **{"evaluator.py": evaluator})
    (problem,) = adapt(two).problems
    assert [s.name for s in problem.stages] == ["stage1", "stage2", "stage3"]
    assert problem.options["cascade_thresholds"] == [0.5, 0.75]


def test_a_program_without_markers_gets_one_block_in_its_comment_syntax(tmp_path):
    folder = tmp_path / "rusty"
    folder.mkdir()
    (folder / "initial_program.rs").write_text('fn main() {\n    println!("hi");\n}\n')
    (folder / "evaluator.py").write_text("def evaluate(program_path):\n    return {'x': 1.0}\n")
    adapted = adapt(folder)
    (problem,) = adapted.problems
    assert problem.seed_source.startswith("// EVOLVE-BLOCK-START\nfn main()")
    assert problem.seed_source.endswith("}\n// EVOLVE-BLOCK-END\n")
    assert problem.language == "rs" and problem.options["program_suffix"] == ".rs"
    assert any("whole file evolves" in note for note in adapted.notes)


def test_an_evaluator_without_evaluate_is_refused_with_the_fix(tmp_path):
    folder = write_openevolve(tmp_path / "x", **{"evaluator.py": "def score(path):\n    pass\n"})
    with pytest.raises(ProblemSpecError, match=r"defines neither evaluate\(program_path\)"):
        adapt(folder)


def test_a_bad_config_value_names_the_setting(tmp_path):
    config = CONFIG.replace("num_islands: 3", "num_islands: many")
    with pytest.raises(ProblemSpecError, match=r"database.num_islands: found 'many'"):
        adapt(write_openevolve(tmp_path / "x", config=config))


def test_a_generated_problem_loads_again_from_its_folder(tmp_path):
    (problem,) = adapt(write_openevolve(tmp_path / "m")).problems
    again = load_problem(problem.spec_path.parent)
    assert again.stages == problem.stages and again.run_defaults == problem.run_defaults


def test_sum_reduction_is_recognised_and_a_spec_is_not(tmp_path, make_problem):
    task = tmp_path / "47.py"
    task.write_text(textwrap.dedent(SUM_REDUCTION))
    assert resolve(str(task)).adapter == "kernelbench"
    spec = make_problem(
        "name = 'p'\nobjectives = {'s': 'maximize'}\ndef evaluate(o):\n    return {}\n",
        "# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n",
    )
    assert resolve(str(spec)).adapter == ""
