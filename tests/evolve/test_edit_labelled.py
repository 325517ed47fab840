"""Answers that label two code fences "search" and "replace" instead of writing the markers."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from evoforge.evolve.edits import EditError, apply_edit, each_block_alone, fenced_blocks
from evoforge.evolve.edits._labelled import labelled_blocks
from evoforge.evolve.edits._parse import EditBlock
from evoforge.evolve.edits._unified import unified_blocks
from tests.evolve.test_edit_formats import unified
from tests.evolve.test_edit_remap import PROGRAM, block, changes, python_check

LABELS = [
    ("SEARCH:", "REPLACE:"),
    ("**Search:**", "**Replace with:**"),
    ("### Original code", "### Updated code"),
    ("Find:", "Replace it with:"),
    ("- Before:", "- After:"),
    ("Edit 1 - search", "Edit 1 - replace"),
    ("Here is the current code:", "Here is the new code:"),
]


def pair(search: str, replace: str, labels: tuple[str, str], tag: str = "python") -> str:
    return f"{labels[0]}\n```{tag}\n{search}```\n\n{labels[1]}\n```{tag}\n{replace}```\n"


def answer_of(blocks: list[EditBlock], labels: tuple[str, str]) -> str:
    parts = [pair(b.search, b.replace, labels) for b in blocks]
    return "I changed the loop.\n\n" + "\n".join(parts) + "\nThis should be faster.\n"


@pytest.mark.parametrize("labels", LABELS)
def test_a_labelled_pair_is_the_block_it_means(labels: tuple[str, str]) -> None:
    search, replace = "            total -= 1\n", "            total -= 2\n"
    applied = apply_edit(PROGRAM, pair(search, replace, labels))
    assert applied.source == apply_edit(PROGRAM, block(search, replace)).source
    assert (applied.kind, applied.n_blocks, applied.match) == ("diff", 1, "exact")


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(change=changes(), labels=st.sampled_from(LABELS))
def test_labelled_pairs_give_the_program_the_same_blocks_with_markers_give(
    change: tuple[str, str], labels: tuple[str, str]
) -> None:
    parent, child = change
    assume(parent != child)
    blocks = unified_blocks(unified(parent, child, 2).split("\n"))
    marked = "".join(block(b.search, b.replace) for b in blocks)
    try:
        expected = apply_edit(parent, marked).source
    except EditError as exc:
        with pytest.raises(EditError) as raised:
            apply_edit(parent, answer_of(blocks, labels))
        assert str(raised.value) == str(exc)
        return
    applied = apply_edit(parent, answer_of(blocks, labels))
    assert applied.source == expected
    assert (applied.kind, applied.n_blocks) == ("diff", len(blocks))


def test_two_pairs_are_two_blocks_and_split_tries_each_alone() -> None:
    first = pair("            total -= 1\n", "            total -= 2\n", LABELS[0])
    second = pair("    return total\n", "    return total * 2\n", LABELS[1])
    answer = f"Two changes.\n\n{first}\nAnd then:\n\n{second}"
    applied = apply_edit(PROGRAM, answer)
    assert applied.n_blocks == 2
    assert "total -= 2" in applied.source and "return total * 2" in applied.source
    assert len(each_block_alone(PROGRAM, answer)) == 2


@pytest.mark.parametrize("drift", ["", "  # the sum"], ids=["copied", "misquoted"])
def test_a_pair_of_whole_programs_is_the_program_it_shows(drift: str) -> None:
    child = PROGRAM.replace("total = 0", "total = 1")
    original = PROGRAM.replace("import math", f"import math{drift}").replace("n):", "n) :")
    answer = pair(original if drift else PROGRAM, child, ("Original code:", "Updated code:"))
    assert apply_edit(PROGRAM, answer, check=python_check).source == child


def test_a_pair_whose_search_is_not_in_the_program_names_that_not_a_rewrite() -> None:
    # read as a rewrite, the REPLACE line alone would be the whole region: it does not parse
    answer = pair("        while count < limit:\n", "            total -= 2\n", LABELS[0])
    with pytest.raises(EditError, match="SEARCH text was not found"):
        apply_edit(PROGRAM, answer, check=python_check)


def test_a_misquoted_search_over_a_whole_function_falls_back_to_its_rewrite() -> None:
    new = "def step(x, n):\n    return x * n\n"
    answer = pair("def step(x, n, m):\n    pass\n", new, LABELS[0])
    applied = apply_edit(PROGRAM, answer, check=python_check)
    assert applied.kind == "rewrite"
    assert applied.source == f"import math\n\n\n# EVOLVE-BLOCK-START\n{new}# EVOLVE-BLOCK-END\n"
    # but not where that rewrite would drop a definition the pair left alone
    parent = PROGRAM.replace("def step", "def helper():\n    return 1\n\n\ndef step")
    with pytest.raises(EditError, match="SEARCH text was not found"):
        apply_edit(parent, answer, check=python_check)


def test_with_two_pairs_a_missing_search_is_refused_never_rewritten() -> None:
    first = pair("            total -= 1\n", "            total -= 2\n", LABELS[0])
    second = pair("def step(x, n, m):\n    pass\n", "def step(x, n):\n    return 0\n", LABELS[0])
    with pytest.raises(EditError, match="block 2: its SEARCH text was not found"):
        apply_edit(PROGRAM, first + second, check=python_check)


@pytest.mark.parametrize(
    "answer",
    [
        # one labelled fence and no pair: the rewrite it always was
        "New code:\n```python\n" + PROGRAM.replace("total = 0", "total = 1") + "```\n",
        # a replace label first: no pair
        "Updated code:\n```python\nx = 1\n```\nOriginal code:\n```python\n"
        + PROGRAM.replace("total = 0", "total = 1")
        + "```\n",
        # fences of output, not code
        "Before:\n```text\n0.91\n```\nAfter:\n```text\n0.95\n```\n\n```python\n"
        + PROGRAM.replace("total = 0", "total = 1")
        + "```\n",
        # a sentence of prose is not a label
        "This version of the function keeps a running sum of every value that it has seen before:\n"
        "```python\nx = 1\n```\nReplace:\n```python\n"
        + PROGRAM.replace("total = 0", "total = 1")
        + "```\n",
    ],
    ids=["lone", "reversed", "text", "prose"],
)
def test_fences_that_are_not_a_labelled_pair_stay_a_rewrite(answer: str) -> None:
    applied = apply_edit(PROGRAM, answer)
    assert applied.kind == "rewrite"
    assert applied.source == PROGRAM.replace("total = 0", "total = 1")


def test_a_pair_under_a_file_path_is_headed_by_it() -> None:
    lines = (
        "slowstats/core.py\nSEARCH:\n```python\na = 1\n```\nREPLACE:\n```python\na = 2\n```\n"
        "SEARCH:\n```python lib/util.py\nb = 1\n```\nREPLACE:\n```python\nb = 2\n```\n"
    ).split("\n")
    blocks = labelled_blocks(lines, fenced_blocks(lines))
    assert [(b.search, b.replace, b.heading) for b in blocks] == [
        ("a = 1\n", "a = 2\n", "slowstats/core.py"),
        ("b = 1\n", "b = 2\n", "lib/util.py"),
    ]
