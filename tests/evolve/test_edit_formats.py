"""Answers in the shapes real models write besides SEARCH/REPLACE blocks: unified diffs, and
thinking written into the answer (``<think>``)."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from evoforge.evolve.edits import EditError, apply_edit
from evoforge.evolve.edits._unified import unified_blocks
from evoforge.problems import make_bundle, split_bundle
from tests.evolve.test_edit_remap import PROGRAM, block, changes


def unified(parent: str, child: str, context: int = 3) -> str:
    """``diff -u`` of ``child`` against ``parent``, as a model that copies it writes it."""
    lines = difflib.unified_diff(
        parent.split("\n"), child.split("\n"), "a/program.py", "b/program.py", n=context
    )
    return "\n".join(line.rstrip("\n") for line in lines) + "\n"


def sloppy(diff: str, how: str) -> str:
    """``diff`` as models garble it: line numbers dropped, the empty context line's space
    dropped, wrapped in a fence with prose around, or without the file header."""
    lines = diff.split("\n")
    if how == "bare_headers":
        lines = ["@@" if line.startswith("@@") else line for line in lines]
    elif how == "blank_context":
        lines = ["" if line == " " else line for line in lines]
    elif how == "fenced":
        lines = ["Here is the change:", "```diff", *lines, "```", "It uses fewer steps."]
    elif how == "no_file_header":
        lines = [line for line in lines if not line.startswith(("--- ", "+++ "))]
    elif how == "prose_after":
        lines = [*lines, "This keeps the total the same but is faster."]
    return "\n".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    change=changes(),
    context=st.integers(1, 3),
    how=st.sampled_from(["clean", "bare_headers", "blank_context", "fenced", "no_file_header",
                         "prose_after"]),
)  # fmt: skip
def test_a_unified_diff_gives_the_program_the_same_change_as_blocks_gives(
    change: tuple[str, str], context: int, how: str
) -> None:
    parent, child = change
    assume(parent != child)
    answer = sloppy(unified(parent, child, context), how)
    try:
        applied = apply_edit(parent, answer)
    except EditError as exc:
        # one line of context may occur twice in the program: refused, never guessed
        assert context == 1 and "matches several places" in str(exc), str(exc)
        return
    assert applied.source == child
    assert applied.kind == "diff"


def test_a_diff_near_the_markers_drops_the_marker_context() -> None:
    child = PROGRAM.replace("def step(x, n):", "def step(x, n):  # the sum")
    applied = apply_edit(PROGRAM, unified(PROGRAM, child))  # context holds START's line
    assert applied.source == child
    end = PROGRAM.replace("    return total\n", "    return total + 0\n")
    assert apply_edit(PROGRAM, unified(PROGRAM, end)).source == end  # and END's line


@pytest.mark.parametrize("where", ["start", "end"])
def test_a_block_that_copies_a_marker_line_as_context_applies(where: str) -> None:
    if where == "start":
        search = "# EVOLVE-BLOCK-START\ndef step(x, n):\n"
        replace = "# EVOLVE-BLOCK-START\ndef step(x, n):  # the sum\n"
    else:
        search = "    return total\n# EVOLVE-BLOCK-END\n"
        replace = "    return total + 0\n# EVOLVE-BLOCK-END\n"
    child = PROGRAM.replace(search, replace)
    assert apply_edit(PROGRAM, block(search, replace)).source == child


def test_a_block_that_moves_a_marker_line_is_still_refused() -> None:
    search = "    return total\n# EVOLVE-BLOCK-END\n"
    with pytest.raises(EditError, match="REPLACE text contains an EVOLVE-BLOCK marker"):
        apply_edit(PROGRAM, block(search, "# EVOLVE-BLOCK-END\n    return total\n"))


def test_hunks_are_read_in_order_and_line_numbers_are_ignored() -> None:
    answer = (
        "@@ -900,3 +900,3 @@\n"
        "     total = 0  # running sum\n"
        "-    for i in range(n):\n"
        "+    for i in range(n + 1):\n"
        "@@ -1,1 +1,1 @@\n"
        "-    return total\n"
        "+    return total * 2\n"
    )
    source = apply_edit(PROGRAM, answer).source
    assert "range(n + 1)" in source and "return total * 2" in source


def test_a_hunk_that_only_adds_says_it_needs_context() -> None:
    with pytest.raises(EditError, match="only adds lines, with no context line"):
        apply_edit(PROGRAM, "@@ -5,0 +5,1 @@\n+    x = 1\n")


def test_search_replace_blocks_win_over_diff_lines() -> None:
    # a block whose REPLACE holds a line starting "@@" is still one block
    blocks = unified_blocks(block("    return total\n", "    return total\n").split("\n"))
    assert blocks == []
    answer = block("    return total\n", "    return total - 1\n") + "@@\n-x\n+y\n"
    assert "return total - 1" in apply_edit(PROGRAM, answer).source


def test_a_diff_of_a_bundle_applies_in_the_file_its_header_names() -> None:
    files = {
        "pkg/a.py": "def f():\n    return 1\n",
        "pkg/b.py": "X = 0\n# EVOLVE-BLOCK-START\ndef g():\n    return 1\n# EVOLVE-BLOCK-END\n",
    }
    bundle = make_bundle(files)
    answer = (
        "diff --git a/pkg/b.py b/pkg/b.py\n--- a/pkg/b.py\n+++ b/pkg/b.py\n@@ -3,2 +3,2 @@\n"
        " def g():\n-    return 1\n+    return 2\n"
    )  # "    return 1" is in both files: the header says which
    out = split_bundle(apply_edit(bundle, answer).source)
    assert out["pkg/a.py"] == files["pkg/a.py"]
    assert out["pkg/b.py"] == files["pkg/b.py"].replace("return 1", "return 2")


# --- thinking in the answer ------------------------------------------------------------------

DRAFT = block("return totl\n", "return 0\n")  # a draft that matches nothing
ANSWER = block("    return total\n", "    return total + 1\n")
MEANT = PROGRAM.replace("    return total\n", "    return total + 1\n")


@pytest.mark.parametrize(
    "answer",
    [
        f"<think>\nTry a draft first:\n{DRAFT}No: add one instead.\n</think>\n\n{ANSWER}",
        f"  <THINK>draft\n```python\nprint('half a program')\n```\n</THINK>{ANSWER}",
        f"<thinking>a</thinking>\n<think>b</think>\n{ANSWER}",
        f"The template opened the tag in the prompt.\n{DRAFT}\n</think>\n\n{ANSWER}",
    ],
    ids=["opening", "case_and_fence", "two_blocks", "closing_only"],
)
def test_thinking_that_opens_the_answer_is_not_read(answer: str) -> None:
    assert apply_edit(PROGRAM, answer).source == MEANT


def test_an_answer_cut_off_while_thinking_says_so() -> None:
    never_closes = r"all reasoning: its <think> block never closes.*max_tokens"
    with pytest.raises(EditError, match=never_closes):
        apply_edit(PROGRAM, f"<think>\nLet me see.\n{DRAFT}")


def test_a_tag_in_the_programs_code_is_code() -> None:
    code = PROGRAM.replace("total = 0  # running sum", "total = 0; tag = '</think>'")
    assert apply_edit(PROGRAM, f"```python\n{code}```\n").source == code
    text = '    """<think> is how they open."""\n'
    child = PROGRAM.replace("    total = 0", text + "    total = 0")
    answer = block("    total = 0  # running sum\n", text + "    total = 0  # running sum\n")
    assert apply_edit(PROGRAM, answer).source == child


# --- through the proposal path ---------------------------------------------------------------


@pytest.mark.timeout(120)
def test_a_thinking_models_unified_diff_makes_a_child_through_a_real_call(monkeypatch) -> None:
    """The answer as a reasoning model served by an OpenAI-compatible server sends it when
    the chat template opened its ``<think>`` in the prompt: thinking (a draft block that
    matches nothing) up to a lone ``</think>``, then a fenced ``diff -u`` whose line numbers
    are wrong. litellm splits off thinking that opens with its tag, not this: the text
    reaches the edit as the server sent it."""
    from evoforge.evolve.prompts import Mode
    from tests.evolve.test_answer_checks import builtin, run_proposal

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-edit-formats")
    folder = builtin("trivial")
    seed = (folder / "seed.py").read_text()
    answer = (
        "Move A towards 3.7. Draft:\n<<<<<<< SEARCH\nA = 1\n=======\nA = 3\n"
        ">>>>>>> REPLACE\nThat would not match. Use a diff.\n</think>\n\n"
        "```diff\n--- a/seed.py\n+++ b/seed.py\n@@ -40,4 +40,4 @@\n"
        " # EVOLVE-BLOCK-START\n-A = 1.0\n+A = 3.5\n B = -0.5\n # EVOLVE-BLOCK-END\n```\n"
    )
    proposal = run_proposal(folder, seed, answer, Mode.DIFF)
    assert proposal.edit_error is None and proposal.syntax_error is None
    assert proposal.child is not None and proposal.child.kind == "diff"
    assert proposal.child.source == seed.replace("A = 1.0", "A = 3.5")
