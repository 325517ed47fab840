"""The sloppy model server: deterministic, sloppy in every announced way, and what exact edit
matching makes of each kind."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import urllib.request
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from evoforge.evolve import EditError, apply_edit
from evoforge.evolve.prompts import CURRENT_PROGRAM_HEADING
from tests.evolve import sloppy_server
from tests.evolve.sloppy_server import (
    BREAKS_EXACT,
    CORRECT,
    CORRECT_SHARE,
    KINDS,
    SloppyServer,
    diff_hunks,
    sloppy_answer,
    write_sloppily,
)

ROOT = Path(__file__).resolve().parents[2]

# Code at three indentation levels, comments, and numbers for the mutator to change.
PROGRAM = """\
import math

# EVOLVE-BLOCK-START
STEP = 0.25  # step of the scan
def score(x):
    total = 0.0  # running sum
    for i in range(4):
        if i > 1:
            total += math.sin(x * 1.5) + i * 0.75
        total -= 0.125 * x
    return total
# EVOLVE-BLOCK-END


def main():
    return score(2.0)
"""

# One edit inside the loop: SEARCH spans the `if` line (8 spaces) and its body (12 spaces).
CHILD = PROGRAM.replace("math.sin(x * 1.5)", "math.sin(x * 1.75)")


def messages(program: str = PROGRAM, nonce: int = 0) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": f"You improve programs. (variant {nonce})"},
        {
            "role": "user",
            "content": f"{CURRENT_PROGRAM_HEADING}\n```python\n{program}```\nImprove it.",
        },
    ]


def apply_exact(parent: str, answer: str) -> str:
    """``apply_edit`` with today's exact rules, whatever keyword selects them once tolerant
    matching exists (it is being built elsewhere; until then the plain call is exact)."""
    params = inspect.signature(apply_edit).parameters
    if "tolerant" in params:
        return apply_edit(parent, answer, tolerant=False).source
    for name in ("matching", "edit_matching"):
        if name in params:
            return apply_edit(parent, answer, **{name: "exact"}).source
    return apply_edit(parent, answer).source


@pytest.fixture(scope="module")
def answers() -> list[sloppy_server.SloppyAnswer]:
    """The server's answers to 300 prompts that differ only in their system message."""
    return [sloppy_answer(messages(nonce=n)) for n in range(300)]


def test_the_answer_is_a_function_of_the_messages_alone():
    with SloppyServer() as server:

        def ask(seed: int, temperature: float) -> str:
            body = {
                "model": "sloppy",
                "messages": messages(nonce=7),
                "seed": seed,
                "temperature": temperature,
            }
            request = urllib.request.Request(
                f"{server.url}/chat/completions",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as reply:
                return json.load(reply)["choices"][0]["message"]["content"]

        first = ask(1, 0.7)
        assert ask(2, 0.7) == first
        assert ask(12345, 1.3) == first
        assert first == sloppy_answer(messages(nonce=7)).text


def test_different_messages_give_different_answers(answers):
    assert len({a.text for a in answers}) > len(answers) // 2


def test_every_kind_occurs_and_changes_the_text(answers):
    seen = Counter()
    for a in answers:
        if not a.hunks:
            continue
        exact = write_sloppily(a.hunks, [CORRECT], np.random.default_rng(0))
        changed = exact.strip() not in a.text or a.text.startswith("<think>")
        for kind in a.kinds:
            if kind == CORRECT or changed:
                seen[kind] += 1
    assert set(seen) == {CORRECT, *KINDS}, seen
    share = seen[CORRECT] / sum(1 for a in answers if a.hunks)
    assert abs(share - CORRECT_SHARE) < 0.1
    assert any(len(a.kinds) == 2 for a in answers)


def test_answers_are_wrapped_in_prose(answers):
    forms = {"thinking", "unified_diff", "labelled_fences", "elided_rewrite"}
    a = next(a for a in answers if a.hunks and not forms & set(a.kinds))
    before, _, rest = a.text.partition("<<<<<<< SEARCH")
    assert before.strip() and "The change:" in before


def test_a_thinking_answer_opens_with_its_thinking_then_the_prose(answers):
    a = next(a for a in answers if "thinking" in a.kinds)
    assert a.text.startswith("<think>\n")
    thinking, _, rest = a.text.partition("</think>")
    assert "<<<<<<< SEARCH" in thinking and "The change:" in rest


def test_a_correct_answer_gives_the_edit_the_mutator_meant(answers):
    correct = [a for a in answers if a.kinds == (CORRECT,) and a.hunks]
    assert correct
    for a in correct:
        assert apply_exact(a.parent, a.text) == a.child


@pytest.mark.parametrize(
    "kind",
    [
        "trailing_spaces",
        "diff_fence",
        "unified_diff",
        "thinking",
        "labelled_fences",
        "elided_rewrite",
    ],
)
def test_exact_rules_apply_the_kinds_they_tolerate(kind):
    hunks = diff_hunks(PROGRAM, CHILD)
    rng = np.random.default_rng(0)
    text = write_sloppily(hunks, [kind], rng, parent=PROGRAM, child=CHILD)
    assert text != write_sloppily(hunks, [CORRECT], np.random.default_rng(0))
    # thinking opens a real answer: prose comes after it
    answer = text if kind == "thinking" else f"Here you go.\n\n{text}\n"
    assert apply_exact(PROGRAM, answer) == CHILD


@pytest.mark.parametrize("kind", sorted(BREAKS_EXACT))
def test_exact_rules_refuse_the_sloppy_kinds(kind):
    hunks = diff_hunks(PROGRAM, CHILD)
    assert len({len(s) - len(s.lstrip()) for s in hunks[0].search}) >= 2  # two levels
    text = write_sloppily(hunks, [kind], np.random.default_rng(0))
    with pytest.raises(EditError):
        apply_exact(PROGRAM, f"Here you go.\n\n{text}\n")


def test_sloppy_answers_that_break_exact_rules_are_refused_by_them(answers):
    refused = 0
    for a in answers:
        if not a.hunks or not {"context_off", "tabs"} & set(a.kinds):
            continue
        indented = any(s[:1] in (" ", "\t") for h in a.hunks for s in h.search)
        if not ("context_off" in a.kinds or indented):
            continue
        if "labelled_fences" in a.kinds:
            # one pair that does not apply is read as the rewrite its REPLACE fence shows, when
            # that keeps every definition: a pair spanning the whole region gives the child
            try:
                assert apply_exact(a.parent, a.text) == a.child
                continue
            except EditError:
                pass
        else:
            with pytest.raises(EditError):
                apply_exact(a.parent, a.text)
        refused += 1
    assert refused > 10


def test_hunks_carry_context_and_stay_inside_the_region():
    (hunk,) = diff_hunks(PROGRAM, CHILD)
    assert hunk.search == (
        "        if i > 1:",
        "            total += math.sin(x * 1.5) + i * 0.75",
        "        total -= 0.125 * x",
    )
    assert hunk.context == (0, 2)
    first_line = PROGRAM.replace("STEP = 0.25", "STEP = 0.3")
    (top,) = diff_hunks(PROGRAM, first_line)
    assert not any("EVOLVE-BLOCK" in line for line in top.search)
    assert top.search[0].startswith("STEP")


def test_a_prompt_without_a_program_is_answered_in_words():
    a = sloppy_answer([{"role": "user", "content": "hello"}])
    assert CURRENT_PROGRAM_HEADING in a.text and a.child is None


def test_the_command_prints_its_url_and_serves():
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.evolve.sloppy_server", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline().strip()
        assert line.startswith("READY http://127.0.0.1:")
        url = line.removeprefix("READY ")
        with urllib.request.urlopen(f"{url}/models", timeout=30) as reply:
            assert json.load(reply)["object"] == "list"
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0
