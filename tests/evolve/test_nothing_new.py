"""Attempts that gave nothing new are told back to the model, and fixed code is marked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evoforge.archive import Archive
from evoforge.evaluators import Status
from evoforge.evolve.offline._prompt import read_prompt
from evoforge.evolve.prompts import (
    Mode,
    PromptConfig,
    PromptContext,
    build_messages,
    editable_note,
    gather_context,
)
from evoforge.islands import Selection
from tests.evolve.run_history import PROBLEM, SEED, History, variant

OUTSIDE = (
    "block 1: its SEARCH text is on line 14, outside the EVOLVE-BLOCK regions (lines 4-9); "
    "only code between the markers may change"
)


@pytest.fixture
def history(tmp_path: Path):
    with Archive(tmp_path / "a.db") as archive:
        yield History(archive)


def duplicate(history: History, parent, twin: str, rule: str, source: str | None = None):
    error = {"exact": "the change reproduces program", "ast": "rejected by the novelty filter"}
    return history.add(
        source, parent=parent, status=Status.DUPLICATE,
        artifacts={"error": error[rule], "rule": rule, "duplicate_of": twin},
    )  # fmt: skip


def context(history: History, parent, shown: int = 3, **options) -> PromptContext:
    return gather_context(
        history.archive, history.run_id, PROBLEM,
        Selection(parent.island, parent, ()), Mode.DIFF,
        PromptConfig(lineage_failures=3), np.random.default_rng(0),
        nothing_new_shown=shown, **options,
    )  # fmt: skip


def test_each_kind_of_attempt_that_gave_nothing_new_says_what_it_amounted_to(history) -> None:
    seed = history.add(SEED, score=1.0)
    parent = history.add(variant(1), parent=seed, score=2.0)
    other = history.add(variant(2), parent=parent, score=2.5)
    lines = {}
    for name, twin, rule in [
        ("unchanged", parent.id, "exact"),
        ("comment", parent.id, "ast"),
        ("undo", seed.id, "exact"),
        ("copy", other.id, "exact"),
        ("same logic", other.id, "ast"),
    ]:
        lines[name] = duplicate(history, parent, twin, rule)
    lines["outside"] = history.add(
        None, parent=parent, status=Status.EDIT_ERROR, artifacts={"error": OUTSIDE}
    )
    texts = {n.program.id: n.text for n in context(history, parent, shown=10).nothing_new}
    said = {name: texts[p.id] for name, p in lines.items()}
    assert "changed nothing" in said["unchanged"]
    assert "only comments, docstrings, formatting or names" in said["comment"]
    assert "undid the change that made it" in said["undo"] and seed.id in said["undo"]
    assert f"exact copy of program {other.id}, which scored 2.5" in said["copy"]
    assert f"same logic as program {other.id}" in said["same logic"]
    assert "fixed code outside the EVOLVE-BLOCK" in said["outside"]


def test_the_parents_own_are_shown_newest_first_and_not_again_among_failures(history) -> None:
    seed = history.add(SEED, score=1.0)
    parent = history.add(variant(1), parent=seed, score=2.0)
    old = duplicate(history, parent, parent.id, "ast")
    not_found = history.add(
        None, parent=parent, status=Status.EDIT_ERROR, artifacts={"error": "block 1: not found"}
    )
    new = duplicate(history, parent, parent.id, "exact")
    shown = context(history, parent)
    assert [n.program.id for n in shown.nothing_new] == [new.id, old.id]
    # a SEARCH text that was not found is a failure like others, not "nothing new"
    assert [f.program.id for f in shown.lineage_failures] == [not_found.id]
    assert [n.program.id for n in context(history, parent, shown=1).nothing_new] == [new.id]

    off = context(history, parent, shown=0)  # [search] nothing_new_feedback = false
    assert off.nothing_new == ()
    assert [f.program.id for f in off.lineage_failures] == [new.id, not_found.id, old.id]


def test_the_prompt_shows_them_beside_the_current_program(history) -> None:
    seed = history.add(SEED, score=1.0)
    parent = history.add(variant(1), parent=seed, score=2.0)
    twin = duplicate(history, parent, parent.id, "ast")
    user = build_messages(PROBLEM, context(history, parent))[1]["content"]
    current = user[user.index("## Current program") : user.index("## Task")]
    assert "### Your earlier attempts from this program that gave nothing new" in current
    assert f"- seq {twin.seq} (diff): the edit changed only comments" in current


def test_the_fixed_code_is_marked_read_only_above_the_program(history) -> None:
    seed = history.add(SEED, score=1.0)
    marked = context(history, seed, mark_fixed_code=True)
    assert marked.editable_note == editable_note(SEED)
    assert editable_note(SEED).startswith(
        "Editable: only the code between the EVOLVE-BLOCK-START and EVOLVE-BLOCK-END lines, "
        "lines 4-9 (from `A = 1.0` to `return A * x + B`). The other 8 lines"
    )
    user = build_messages(PROBLEM, marked)[1]["content"]
    heading = user.index("## Current program")
    assert heading < user.index("Editable: only the code") < user.index("```python", heading)
    assert read_prompt([{"role": "user", "content": user}])[0] == SEED  # the model reads it
    assert context(history, seed).editable_note == ""  # off: the prompt as before
    assert "Editable:" not in build_messages(PROBLEM, context(history, seed))[1]["content"]


@pytest.mark.parametrize(
    "source",
    ["x = 1\n", "# EVOLVE-BLOCK-START\nx = 1\n"],
    ids=["no markers", "unbalanced markers"],
)
def test_a_program_without_valid_regions_gets_no_note(source: str) -> None:
    assert editable_note(source) == ""
