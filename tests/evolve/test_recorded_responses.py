"""Recorded model answers, realistic and hostile, applied to the built-in problems' seeds.

Each ``recorded/*.json`` holds one answer as an LLM sent it (prose, fences, blocks) and what
applying it to its parent must give: the exact child, or the :class:`EditError` reason. The
parent is the problem's seed, optionally broken first (``parent_replacements``) for repairs.

Fields: ``problem`` (a built-in problem), ``mode``, ``answer`` or ``answer_parts`` (``repeat``
``times`` times, then ``then``: the 1 MB answers), ``parent_replacements``, ``artifacts`` (the
failing parent's feedback, for the repair prompt), ``expect``: either ``error`` (substrings of
the message) or ``kind``, ``n_blocks`` and one of ``replacements`` (child = parent with each
``[old, new]`` replaced, each ``old`` occurring once), ``block`` (child = parent with its only
EVOLVE-BLOCK's content replaced) or ``child_is_seed``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from evoforge.archive import Program, program_id
from evoforge.evaluators import Status
from evoforge.evolve.checks._syntax import check_syntax
from evoforge.evolve.edits import EditError, apply_edit
from evoforge.evolve.offline._mutator import mutate
from evoforge.evolve.offline._prompt import read_prompt
from evoforge.evolve.prompts._context import PromptContext
from evoforge.evolve.prompts._messages import build_messages
from evoforge.evolve.prompts._modes import Mode
from evoforge.problems import find_blocks, load_problem
from evoforge.problems._blocks import frozen_parts

ROOT = Path(__file__).resolve().parents[2]
# small_model_answers.json is a collection of real answers, replayed by test_small_model_answers
RECORDED = sorted(
    p
    for p in (Path(__file__).parent / "recorded").glob("*.json")
    if p.name != "small_model_answers.json"
)
PROBLEMS = {
    name: load_problem(ROOT / "problems" / "builtin" / name)
    for name in ("circle_packing", "trivial")
}


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def answer_of(case: dict) -> str:
    if "answer" in case:
        return case["answer"]
    parts = case["answer_parts"]
    return parts["repeat"] * parts["times"] + parts["then"]


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"fixture error: {old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


def parent_of(case: dict) -> str:
    source = PROBLEMS[case["problem"]].seed_source
    for old, new in case.get("parent_replacements", []):
        source = replace_once(source, old, new)
    return source


def expected_child(case: dict, parent: str) -> str:
    expect = case["expect"]
    if expect.get("child_is_seed"):
        return PROBLEMS[case["problem"]].seed_source
    if "block" in expect:
        (region,) = find_blocks(parent)
        return parent[: region.start] + expect["block"] + parent[region.end :]
    child = parent
    for old, new in expect["replacements"]:
        child = replace_once(child, old, new)
    return child


def test_every_kind_of_answer_is_recorded() -> None:
    names = {path.stem for path in RECORDED}
    modes = {load(path)["mode"] for path in RECORDED if "kind" in load(path)["expect"]}
    assert modes == {"diff", "rewrite", "crossover", "repair"}
    assert {
        "no_blocks", "search_partially_matches", "edit_outside_blocks", "nested_search",
        "unclosed_block", "huge_answer_no_blocks", "empty_answer",
        "rewrite_deletes_markers_circle_packing", "rewrite_deletes_start_marker",
    } <= names  # fmt: skip
    assert {load(path)["problem"] for path in RECORDED} == {"circle_packing", "trivial"}


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_recorded_answer_gives_the_expected_child_or_refusal(path: Path) -> None:
    case = load(path)
    parent, answer, expect = parent_of(case), answer_of(case), case["expect"]
    started = time.perf_counter()
    if "error" in expect:
        with pytest.raises(EditError) as refused:
            apply_edit(parent, answer)
        for fragment in expect["error"]:
            assert fragment in str(refused.value)
    else:
        applied = apply_edit(parent, answer)
        assert applied.source == expected_child(case, parent)
        assert (applied.kind, applied.n_blocks) == (expect["kind"], expect["n_blocks"])
        assert frozen_parts(applied.source) == frozen_parts(parent)
        assert check_syntax(applied.source) is None
    assert time.perf_counter() - started < 5.0  # linear even for the 1 MB answers


def test_huge_answers_are_one_megabyte() -> None:
    for name in ("huge_answer_no_blocks", "huge_answer_with_block"):
        case = load(Path(__file__).parent / "recorded" / f"{name}.json")
        assert len(answer_of(case)) >= 1_000_000


def program(case: dict, source: str, seq: int, **fields) -> Program:
    return Program(
        run_id="r", id=program_id(source), seq=seq, source=source, parent_id=None, island=0,
        generation=1, **fields,
    )  # fmt: skip


@pytest.mark.parametrize(
    "path", [p for p in RECORDED if "kind" in load(p)["expect"]], ids=lambda p: p.stem
)
def test_prompt_of_the_recorded_mode_asks_for_what_the_answer_gives(path: Path) -> None:
    """The prompt a recorded answer replies to: its mode's task and answer format, and the
    offline model's reply to the same prompt applies to the same parent."""
    case = load(path)
    problem, parent_source = PROBLEMS[case["problem"]], parent_of(case)
    mode = Mode(case["mode"])
    failed = mode is Mode.REPAIR
    parent = program(
        case, parent_source, 5,
        status=Status.RUNTIME_ERROR if failed else Status.OK,
        score=None if failed else 1.0,
        artifacts=case.get("artifacts", {}),
    )  # fmt: skip
    second = None
    if mode is Mode.CROSSOVER:
        second = program(case, problem.seed_source.replace("0.5", "0.25", 1), 4, status=Status.OK)
    context = PromptContext(mode, parent, second_parent=second)
    user = build_messages(problem, context)[1]["content"]
    assert parent_source.rstrip() in user
    for text in case.get("artifacts", {}).values():
        assert text.strip()[-60:] in user
    if mode is Mode.REPAIR:
        assert "fix" in user.split("## Task", 1)[1].lower()
    program_read, inspirations = read_prompt(build_messages(problem, context))
    assert program_read == parent_source
    assert inspirations == ([second.source] if second else [])
    if check_syntax(parent_source) is None:  # it leaves programs that do not parse alone
        offline = mutate(program_read, inspirations, np.random.default_rng(0))
        assert apply_edit(parent_source, offline).source != parent_source
