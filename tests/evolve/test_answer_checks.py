"""What small models send cannot break a run (issue 35): through the real proposal path.

Each ``recorded/refused/*.json`` is one answer in the shape SmolLM2-135M sent them (rewrites
without markers, a one-line stub, ``text`` fences, prose in a bare fence, a dropped or
undefined name), plus controls that must still give a child. Each is served by the fake
OpenAI-compatible server and goes through :func:`evoforge.evolve.proposals._propose.propose`
(prompt, litellm call, answer applied, syntax and name checks), and ends as its ``expect``
says: ``edit_error`` with the message fragments, or a child (``block``: the EVOLVE-BLOCK's
new content; ``replacements``: the parent with each ``[old, new]`` replaced). A refused child
that applying alone would have made really dies with ``NameError`` when run: the check
refuses nothing that could have been scored. A child that is let through runs without
``NameError``.

Fields: ``problem`` (built in), ``mode``, ``answer``, optional ``parent_replacements``
(``[old, new]`` pairs applied to the seed), ``expect``.
"""

from __future__ import annotations

import ast
import asyncio
import json
from pathlib import Path

import pytest

from evoforge.archive import Program, Status, program_id
from evoforge.evolve import RunConfig, resolve
from evoforge.evolve.checks._names import check_program_names
from evoforge.evolve.edits import EditError, apply_edit
from evoforge.evolve.models import ModelSpec
from evoforge.evolve.prompts import Mode, PromptContext, build_messages
from evoforge.evolve.proposals import Proposal, ProposalRequest, ProposalSetup
from evoforge.evolve.proposals._propose import propose
from evoforge.problems import find_blocks, load_problem
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC
from tests.evolve.openai_server import OpenAIServer
from tests.problems.formats import write_openevolve

ROOT = Path(__file__).resolve().parents[2]
RECORDED = sorted((Path(__file__).parent / "recorded" / "refused").glob("*.json"))
MODEL = "openai/evoforge-fake"

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def api_key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-answer-checks")  # the OpenAI SDK needs one


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def builtin(name: str) -> Path:
    return ROOT / "problems" / "builtin" / name


def parent_program(source: str) -> Program:
    return Program(
        run_id="r", id=program_id(source), seq=0, source=source, parent_id=None, island=0,
        generation=0, status=Status.OK, score=-3.0, objectives={"score": -3.0},
    )  # fmt: skip


def run_proposal(problem_dir: Path, parent: str, answer: str, mode: Mode) -> Proposal:
    """``answer`` served by the fake server, through ``propose`` as a worker runs it."""
    problem = load_problem(problem_dir)
    config = RunConfig(problem=str(problem_dir))
    setup = ProposalSetup(
        problem=problem, prompts=config.prompts, temperature=config.temperature,
        max_tokens=config.max_tokens, retry=config.retry, models=(MODEL,),
    )  # fmt: skip
    with OpenAIServer(answer=answer) as server:
        request = ProposalRequest(
            1,
            PromptContext(mode, parent_program(parent)),
            ModelSpec(model=MODEL, api_base=server.url, timeout_s=30),
            model_seed=1,
            jitter_seed=(7, 1, 1),
        )
        proposal = asyncio.run(propose(setup, request))
    assert proposal.failure is None and proposal.completion is not None
    assert proposal.completion.text == answer
    return proposal


def runs_main(source: str) -> BaseException | None:
    """Run ``source``'s ``main()`` here; the exception it raises, or None."""
    namespace: dict = {"__name__": "candidate"}
    try:
        exec(compile(source, "<candidate>", "exec"), namespace)
        namespace["main"]()
    except Exception as exc:
        return exc
    return None


def parent_of(case: dict) -> str:
    source = load_problem(builtin(case["problem"])).seed_source
    for old, new in case.get("parent_replacements", []):
        assert source.count(old) == 1, f"fixture error: {old!r}"
        source = source.replace(old, new)
    return source


def test_the_shapes_of_issue_35_are_recorded() -> None:
    names = {path.stem for path in RECORDED}
    assert {
        "rewrite_without_markers_new_main_trivial", "rewrite_without_markers_circle_packing",
        "one_line_stub_circle_packing", "text_fence_trivial",
        "prose_in_untagged_fence_circle_packing", "diff_renames_a_called_function_circle_packing",
    } <= names  # fmt: skip
    statuses = {load(path)["expect"]["status"] for path in RECORDED}
    assert statuses == {"edit_error", "child"}


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_a_recorded_answer_ends_with_its_status_and_message(path: Path) -> None:
    case = load(path)
    parent, answer, expect = parent_of(case), case["answer"], case["expect"]
    proposal = run_proposal(builtin(case["problem"]), parent, answer, Mode(case["mode"]))
    if expect["status"] == "edit_error":
        assert proposal.child is None and proposal.edit_error is not None
        for fragment in expect["error"]:
            assert fragment in proposal.edit_error
        try:  # what applying alone made of it, before this check: it could only fail
            unchecked = apply_edit(parent, answer).source
        except EditError:
            return
        assert isinstance(runs_main(unchecked), NameError)
    else:
        assert proposal.edit_error is None and proposal.syntax_error is None
        assert proposal.child is not None
        child = proposal.child.source
        if "block" in expect:
            (region,) = find_blocks(parent)
            assert child == parent[: region.start] + expect["block"] + parent[region.end :]
        for old, new in expect.get("replacements", []):
            assert parent.count(old) == 1, f"fixture error: {old!r}"
            assert child == parent.replace(old, new)
        if expect.get("same_code_as_parent"):  # comments and blank lines aside: a twin
            assert child != parent and ast.dump(ast.parse(child)) == ast.dump(ast.parse(parent))
        assert not isinstance(runs_main(child), NameError)


@pytest.mark.parametrize("problem", ["trivial", "circle_packing"])
def test_the_format_example_copied_literally_is_a_valid_located_edit(problem: str) -> None:
    """A small model copies the answer format's example: it must apply and run, not waste
    the call (the old placeholder, 'lines copied exactly from the current program', did)."""
    folder = builtin(problem)
    seed = load_problem(folder).seed_source
    user = build_messages(load_problem(folder), PromptContext(Mode.DIFF, parent_program(seed)))
    section = user[1]["content"].split("## Answer format", 1)[1]
    example = section[section.index("<<<<<<< SEARCH") :]
    assert "lines copied exactly" not in section
    proposal = run_proposal(folder, seed, "Following the format:\n\n" + example, Mode.DIFF)
    assert proposal.edit_error is None and proposal.syntax_error is None
    assert proposal.child is not None and proposal.child.source != seed
    assert runs_main(proposal.child.source) is None


def test_the_old_placeholder_example_copied_literally_was_a_wasted_call() -> None:
    folder = builtin("trivial")
    seed = load_problem(folder).seed_source
    placeholder = (
        "<<<<<<< SEARCH\nlines copied exactly from the current program\n=======\n"
        "the lines that replace them\n>>>>>>> REPLACE\n"
    )
    proposal = run_proposal(folder, seed, placeholder, Mode.DIFF)
    assert proposal.child is None and proposal.edit_error is not None


def test_a_child_that_drops_the_entry_function_is_refused(make_problem) -> None:
    folder = make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)
    seed = load_problem(folder).seed_source
    answer = "<<<<<<< SEARCH\ndef main():\n=======\ndef solve():\n>>>>>>> REPLACE\n"
    proposal = run_proposal(folder, seed, answer, Mode.DIFF)
    assert proposal.edit_error is not None
    assert "it no longer defines main(), which the evaluator calls" in proposal.edit_error


def test_an_openevolve_child_that_drops_what_the_evaluator_calls_is_refused(tmp_path) -> None:
    """The folder's evaluator loads the program and calls ``module.run_search()``; the whole
    file evolves (no markers), so a rewrite can drop it."""
    program = "import numpy as np\n\n\ndef run_search():\n    return 0.5, 0.5, float(np.sin(0.5))\n"
    folder = write_openevolve(tmp_path / "oe", config=None, **{"initial_program.py": program})
    (problem,) = resolve(str(folder)).problems
    seed = problem.seed_source
    kept = "```python\nimport numpy as np\n\n\ndef run_search():\n    return 1.0, 1.0, 0.0\n```\n"
    dropped = "```python\nimport numpy as np\n\n\ndef search():\n    return 1.0, 1.0, 0.0\n```\n"
    fine = run_proposal(problem.spec_path.parent, seed, kept, Mode.REWRITE)
    refused = run_proposal(problem.spec_path.parent, seed, dropped, Mode.REWRITE)
    assert fine.edit_error is None and fine.child is not None
    assert refused.edit_error is not None
    assert "no longer defines run_search(), which the evaluator calls" in refused.edit_error


def test_a_name_the_evaluator_injects_is_not_refused(make_problem) -> None:
    """The tpu harness sets ``INTERPRET`` in the candidate's namespace; a parent that reads
    it was evaluated with it, so its children may read it too."""
    seed = TRIVIAL_SEED.replace("a = 0.5", "a = 0.5 if INTERPRET else 0.0")
    folder = make_problem(TRIVIAL_SPEC, seed)
    source = load_problem(folder).seed_source
    answer = (
        "<<<<<<< SEARCH\n    b = 0.25\n=======\n    b = 2.0 if INTERPRET else 1.0\n"
        ">>>>>>> REPLACE\n"
    )
    proposal = run_proposal(folder, source, answer, Mode.DIFF)
    assert proposal.edit_error is None and proposal.child is not None


def test_a_repair_that_keeps_the_reported_undefined_name_is_refused(make_problem) -> None:
    """A failed parent's undefined name is not the evaluator's when its feedback reports it."""
    broken = TRIVIAL_SEED.replace("b = 0.25", "b = missing")
    folder = make_problem(TRIVIAL_SPEC, broken)
    source = load_problem(folder).seed_source
    child = source.replace("a = 0.5", "a = 0.75")
    problem = load_problem(folder)
    assert check_program_names(child, source, problem) is None  # as an evaluated parent's
    feedback = "NameError: name 'missing' is not defined"
    refused = check_program_names(child, source, problem, parent_feedback=feedback)
    assert refused is not None and "it reads missing (line" in refused


CPP_PARENT = (
    "#include <vector>\n\n// EVOLVE-BLOCK-START\nint width() { return 4; }\n"
    "// EVOLVE-BLOCK-END\n\nint main() { return width(); }\n"
)


@pytest.mark.parametrize(
    ("answer", "refusal"),
    [
        pytest.param("```\nint width() { return 5; }\n```\n", None, id="untagged-code"),
        pytest.param("```cpp\nint width() { return 5; }\n```\n", None, id="tagged-cpp"),
        pytest.param(
            "```\nMake the width five, it packs better.\n```\n",
            "only code fence is untagged and not cpp",
            id="untagged-prose",
        ),
        pytest.param(
            "```python\nwidth = 5\n```\n",
            "only code fence is tagged python",
            id="another-language",
        ),
    ],
)
def test_a_cpp_rewrite_is_code_only_when_tree_sitter_parses_it(
    answer: str, refusal: str | None
) -> None:
    if refusal is None:
        child = apply_edit(CPP_PARENT, answer, language="cpp").source
        assert "int width() { return 5; }" in child and child.endswith(CPP_PARENT[-40:])
    else:
        with pytest.raises(EditError, match=refusal):
            apply_edit(CPP_PARENT, answer, language="cpp")


ZIG_PARENT = "// EVOLVE-BLOCK-START\nconst width = 4;\n// EVOLVE-BLOCK-END\n"
TRIVIAL = load_problem(builtin("trivial")).seed_source


@pytest.mark.parametrize(
    ("parent", "language", "answer", "block"),
    [
        pytest.param(
            ZIG_PARENT, "zig", "```zig\nconst width = 5;\n```\n", "const width = 5;\n",
            id="own-tag-of-a-language-without-a-table",
        ),
        pytest.param(
            ZIG_PARENT, "zig", "```\nconst width = 6;\n```\n", "const width = 6;\n",
            id="untagged-without-a-grammar",
        ),
        pytest.param(
            TRIVIAL, "python", "```\nA = 3.7\nB = -1.2\n```\nIn words:\n```\nset A to 3.7\n```\n",
            "A = 3.7\nB = -1.2\n", id="the-untagged-fence-that-parses",
        ),
    ],
)  # fmt: skip
def test_the_code_fence_is_chosen(parent: str, language: str, answer: str, block: str) -> None:
    (region,) = find_blocks(parent)
    child = apply_edit(parent, answer, language=language).source
    assert child == parent[: region.start] + block + parent[region.end :]


def test_a_text_fence_is_never_code_whatever_the_language() -> None:
    with pytest.raises(EditError, match="only code fence is tagged text"):
        apply_edit(ZIG_PARENT, "```text\nconst width = 5;\n```\n", language="zig")
