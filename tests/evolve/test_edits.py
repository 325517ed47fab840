"""Parsing and applying model answers: diffs, rewrites, and every way an answer can be wrong."""

from __future__ import annotations

import time

import pytest

from evoforge.evolve.edits import MAX_BLOCKS, AppliedEdit, EditError, apply_edit
from evoforge.problems._blocks import BlockError, frozen_parts

PARENT = """\
import math


def frozen_helper(x):
    return x + 1


# EVOLVE-BLOCK-START
SCALE = 2.0


def step(x):
    y = x * SCALE
    return y + 1
# EVOLVE-BLOCK-END


def evaluate():
    return step(3)
"""

TWO_REGIONS = """\
def f(x):
    # EVOLVE-BLOCK-START
    a = 1
    return x + a
    # EVOLVE-BLOCK-END


FIXED = 1


# EVOLVE-BLOCK-START
b = 1
# EVOLVE-BLOCK-END
"""


def block(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def check_frozen(parent: str, child: str) -> None:
    assert frozen_parts(child) == frozen_parts(parent)


# --- diffs that apply ----------------------------------------------------------------------


def test_single_block_applies() -> None:
    edit = apply_edit(PARENT, block("SCALE = 2.0\n", "SCALE = 2.5\n"))
    assert edit == AppliedEdit(PARENT.replace("SCALE = 2.0", "SCALE = 2.5"), "diff", 1, "exact")


def test_prose_before_between_and_after_blocks_is_ignored() -> None:
    answer = (
        "I will tune two things.\n\n"
        + block("SCALE = 2.0\n", "SCALE = 3.0\n")
        + "\nAnd the offset:\n"
        + block("    return y + 1\n", "    return y + 2\n")
        + "\nThis should help.\n"
    )
    edit = apply_edit(PARENT, answer)
    assert edit.n_blocks == 2
    assert "SCALE = 3.0" in edit.source and "return y + 2" in edit.source
    check_frozen(PARENT, edit.source)


def test_blocks_inside_code_fences() -> None:
    answer = "Here:\n```python\n" + block("SCALE = 2.0\n", "SCALE = 4.0\n") + "```\n"
    assert "SCALE = 4.0" in apply_edit(PARENT, answer).source


def test_fence_wrapped_inside_sections_is_dropped() -> None:
    answer = (
        "<<<<<<< SEARCH\n```\nSCALE = 2.0\n```\n=======\n```\nSCALE = 5.0\n```\n>>>>>>> REPLACE"
    )
    assert "SCALE = 5.0\n" in apply_edit(PARENT, answer).source


def test_trailing_whitespace_on_markers_and_search_lines() -> None:
    answer = "<<<<<<< SEARCH   \nSCALE = 2.0   \n=======  \nSCALE = 6.0\n>>>>>>> REPLACE \t\n"
    edit = apply_edit(PARENT, answer)
    assert edit.source == PARENT.replace("SCALE = 2.0", "SCALE = 6.0")


def test_uniform_indentation_difference_is_tolerated_and_replace_reindented() -> None:
    new = "y = x * SCALE\nif y > 3:\n    y = 3\nreturn y\n"
    answer = block("y = x * SCALE\nreturn y + 1\n", new)
    edit = apply_edit(PARENT, answer)
    assert "    y = x * SCALE\n    if y > 3:\n        y = 3\n    return y\n" in edit.source
    check_frozen(PARENT, edit.source)


def test_later_blocks_see_earlier_changes() -> None:
    answer = block("SCALE = 2.0\n", "SCALE = 2.5\n") + block("SCALE = 2.5\n", "SCALE = 7.0\n")
    assert "SCALE = 7.0" in apply_edit(PARENT, answer).source


def test_match_inside_a_region_is_preferred_over_frozen_copy() -> None:
    parent = "x = 1\n# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n"
    edit = apply_edit(parent, block("x = 1\n", "x = 2\n"))
    assert edit.source == "x = 1\n# EVOLVE-BLOCK-START\nx = 2\n# EVOLVE-BLOCK-END\n"


def test_blocks_in_two_regions() -> None:
    answer = block("    a = 1\n", "    a = 2\n") + block("b = 1\n", "b = 3\n")
    edit = apply_edit(TWO_REGIONS, answer)
    assert "    a = 2\n" in edit.source and "\nb = 3\n" in edit.source
    assert "FIXED = 1" in edit.source
    check_frozen(TWO_REGIONS, edit.source)


def test_empty_replace_deletes_lines() -> None:
    edit = apply_edit(PARENT, block("    y = x * SCALE\n    return y + 1\n", "    return x\n"))
    assert "y = x * SCALE" not in edit.source


# --- rewrites ------------------------------------------------------------------------------


def test_rewrite_with_markers_keeps_frozen_parts_byte_identical() -> None:
    new = PARENT.replace("SCALE = 2.0", "SCALE = 9.0").replace("import math\n", "import math   \n")
    edit = apply_edit(PARENT, f"New version:\n```python\n{new}```\n")
    assert edit.kind == "rewrite" and edit.n_blocks == 0
    assert edit.source == PARENT.replace("SCALE = 2.0", "SCALE = 9.0")  # trailing space dropped


def test_rewrite_takes_last_python_fence() -> None:
    first = PARENT.replace("SCALE = 2.0", "SCALE = 1.0")
    last = PARENT.replace("SCALE = 2.0", "SCALE = 8.0")
    answer = f"```python\n{first}```\n```text\nnot code\n```\n```python\n{last}```\n"
    assert "SCALE = 8.0" in apply_edit(PARENT, answer).source


def test_rewrite_without_markers_becomes_the_single_region() -> None:
    answer = "```\nSCALE = 3.0\n\n\ndef step(x):\n    return x * SCALE\n```"
    edit = apply_edit(PARENT, answer)
    assert edit.kind == "rewrite"
    assert "# EVOLVE-BLOCK-START\nSCALE = 3.0\n" in edit.source
    check_frozen(PARENT, edit.source)


def test_rewrite_without_markers_into_indented_region_is_indented() -> None:
    parent = "def f(x):\n    # EVOLVE-BLOCK-START\n    return x\n    # EVOLVE-BLOCK-END\n"
    edit = apply_edit(parent, "```python\ny = x * 2\nreturn y\n```")
    assert edit.source == (
        "def f(x):\n    # EVOLVE-BLOCK-START\n    y = x * 2\n    return y\n    # EVOLVE-BLOCK-END\n"
    )


# --- hostile answers -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "```python\n<<<<<<< SEARCH\nSCALE = 2.0\n=======\nSCALE = 3.0\n```\n",
        "```python\n<<<<<<< SEARCH\nSCALE = 2.0\n=======\nSCALE = 3.0\n```\n\nIt grows faster.\n",
        "<<<<<<< SEARCH\nSCALE = 2.0\n=======\n```python\nSCALE = 3.0\n```\nDone.\n",
        "<<<<<<< SEARCH\nSCALE = 2.0\n=======\n```\nSCALE = 3.0\n```\n",
    ],
    ids=["fence-closed", "prose-after", "fence-after-divider", "untagged-fence"],
)
def test_a_block_whose_replace_marker_is_left_out_ends_at_its_closing_fence(answer: str) -> None:
    assert apply_edit(PARENT, answer).source == PARENT.replace("SCALE = 2.0", "SCALE = 3.0")


def test_a_fenced_block_without_its_replace_marker_ends_before_the_next_block() -> None:
    first = "```python\n<<<<<<< SEARCH\nSCALE = 2.0\n=======\nSCALE = 3.0\n```\n\nThen:\n\n"
    second = "```python\n" + block("    return y + 1\n", "    return y + 2\n") + "```\n"
    child = apply_edit(PARENT, first + second)
    assert child.n_blocks == 2
    assert child.source == PARENT.replace("SCALE = 2.0", "SCALE = 3.0").replace("y + 1", "y + 2")


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        pytest.param("I think the program is fine.", "no SEARCH/REPLACE block", id="no-blocks"),
        pytest.param("", "no SEARCH/REPLACE block", id="empty-answer"),
        pytest.param(block("OFFSET = 3.0\n", "OFFSET = 4.0\n"), "'OFFSET = 3.0'", id="not-found"),
        pytest.param(
            block("def step(x):\n    y = x * 3\n", "def step(x):\n"), "not found", id="partial"
        ),
        pytest.param(block("", "SCALE = 1.0\n"), "SEARCH section is empty", id="empty-search"),
        pytest.param(block("\n  \n", "x = 1\n"), "SEARCH section is empty", id="blank-search"),
        pytest.param(
            block("    return x + 1\n", "    return x + 2\n"),
            "outside the EVOLVE-BLOCK regions (lines 9-14)",
            id="outside-region",
        ),
        pytest.param(
            block("# EVOLVE-BLOCK-START\nSCALE = 2.0\n", "SCALE = 2.0\n"),
            "EVOLVE-BLOCK marker line",
            id="spans-marker",
        ),
        pytest.param(
            block("    return y + 1\n", "    return y + 1\n# EVOLVE-BLOCK-END\n"),
            "REPLACE text contains an EVOLVE-BLOCK marker",
            id="replace-has-marker",
        ),
        pytest.param(block("SCALE = 2.0\n", "SCALE = 2.0\n"), "changes nothing", id="no-op"),
        pytest.param(
            "<<<<<<< SEARCH\nSCALE = 2.0\n>>>>>>> REPLACE\n", "no '=======' line", id="no-divider"
        ),
        pytest.param(
            "<<<<<<< SEARCH\nSCALE = 2.0\n=======\nSCALE = 3.0\n", "never closed", id="truncated"
        ),
        pytest.param(">>>>>>> REPLACE\n", "without a '<<<<<<< SEARCH'", id="stray-replace"),
        pytest.param(
            "<<<<<<< SEARCH\na\n=======\nb\n<<<<<<< SEARCH\n", "not closed", id="unclosed-then-new"
        ),
    ],
)
def test_bad_diff_raises_helpful_error(answer: str, message: str) -> None:
    with pytest.raises(EditError, match=None) as info:
        apply_edit(PARENT, answer)
    assert message in str(info.value)


def test_errors_name_the_block_number() -> None:
    answer = block("SCALE = 2.0\n", "SCALE = 2.5\n") + block("    return x + 1\n", "pass\n")
    with pytest.raises(EditError, match=r"^block 2: its SEARCH text is on line 5, outside"):
        apply_edit(PARENT, answer)


def test_format_errors_show_a_valid_answer() -> None:
    with pytest.raises(EditError, match="<<<<<<< SEARCH") as info:
        apply_edit(PARENT, "no idea")
    assert "```python" in str(info.value)


def test_too_many_blocks() -> None:
    answer = "".join(block(f"x{i}\n", f"y{i}\n") for i in range(MAX_BLOCKS + 1))
    with pytest.raises(EditError, match=f"more than {MAX_BLOCKS} SEARCH/REPLACE blocks"):
        apply_edit(PARENT, answer)


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("word " * 220_000, id="prose"),
        pytest.param(block("x\n" * 500_000, "y\n"), id="huge-search"),
        pytest.param(block("SCALE = 2.0\n", "z = 1\n" * 200_000), id="huge-replace"),
        pytest.param("<<<<<<< SEARCH\n" + "=\n" * 500_000, id="unclosed"),
        pytest.param("```python\n" + "a = (\n" * 200_000, id="unclosed-fence"),
        pytest.param("`" * 1_100_000, id="backticks"),
        pytest.param("<" * 1_100_000, id="angles"),
    ],
)
@pytest.mark.timeout(60)
def test_megabyte_answer_ends(answer: str) -> None:
    """A megabyte answer is read in linear time (well under a second on an idle core); a
    quadratic or backtracking parser would take minutes, which the timeout catches without
    asserting on a loaded machine's clock."""
    assert len(answer) >= 1_000_000
    try:
        apply_edit(PARENT, answer)
    except EditError:
        pass


def test_huge_replace_applies() -> None:
    edit = apply_edit(PARENT, block("SCALE = 2.0\n", "z = 1\n" * 200_000))
    assert edit.source.count("z = 1\n") == 200_000


def test_search_repeated_many_times_in_parent_is_fast() -> None:
    parent = "# EVOLVE-BLOCK-START\n" + "x = 1\n" * 100_000 + "# EVOLVE-BLOCK-END\n"
    started = time.perf_counter()
    with pytest.raises(EditError, match="not found"):
        apply_edit(parent, block("    x = 1\n    x = 2\n", "y\n"))
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("code", "message"),
    [
        pytest.param(PARENT.replace("# EVOLVE-BLOCK-END\n", ""), "never closed", id="unbalanced"),
        pytest.param(
            PARENT.replace("SCALE = 2.0\n", "# EVOLVE-BLOCK-START\nSCALE = 2.0\n"),
            "cannot nest",
            id="nested",
        ),
        pytest.param(
            PARENT.replace("return step(3)", "return step(4)"),
            "its line 19 is '    return step(4)'",
            id="frozen-changed",
        ),
        pytest.param(
            PARENT.replace("import math\n", ""), "changes frozen code", id="frozen-line-removed"
        ),
        pytest.param(
            PARENT + "# EVOLVE-BLOCK-START\nz = 1\n# EVOLVE-BLOCK-END\n",
            "2 EVOLVE-BLOCK regions",
            id="extra-region",
        ),
    ],
)
def test_bad_rewrite_raises_helpful_error(code: str, message: str) -> None:
    with pytest.raises(EditError) as info:
        apply_edit(PARENT, f"```python\n{code}```")
    assert message in str(info.value)


def test_rewrite_without_markers_needs_single_region() -> None:
    with pytest.raises(EditError, match="current program has 2 regions"):
        apply_edit(TWO_REGIONS, "```python\nb = 2\n```")


def test_empty_rewrite() -> None:
    with pytest.raises(EditError, match="code block is empty"):
        apply_edit(PARENT, "```python\n\n```")


def test_parent_without_regions_is_a_block_error() -> None:
    with pytest.raises(BlockError):
        apply_edit("x = 1\n", block("x = 1\n", "x = 2\n"))
