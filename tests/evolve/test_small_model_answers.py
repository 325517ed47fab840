"""Real answers of a small local model (``recorded/small_model_answers.json``) replayed.

``bench/local_model_trial.py`` recorded them from evoforge runs driven by SmolLM2-135M-Instruct
served by llama-cpp-python: rewrites without markers, stubs, fences of every language, prose,
partial SEARCH blocks. Whatever such an answer is, applying it to the program its prompt
showed either gives a child that keeps the parent's frozen code byte for byte, or is refused
with an :class:`EditError` whose message a model can act on; it never crashes the proposal
and never takes long. What each answer gives is left free (the recorded ``status`` is how the
engine took it when recorded), so better parsing can turn refusals into children.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from evoforge.evolve.edits import EditError, apply_edit
from evoforge.problems import find_blocks
from evoforge.problems._blocks import frozen_parts

RECORDED = Path(__file__).parent / "recorded" / "small_model_answers.json"
CASES = json.loads(RECORDED.read_text(encoding="utf-8"))
ANSWERS = CASES["answers"]


def case_id(case: dict) -> str:
    return f"{case['problem']}-{case['mode']}-{case['shape']}-{case['status']}"


def test_the_recorded_answers_are_varied() -> None:
    """Enough answers, from several modes, of many shapes and outcomes."""
    assert len(ANSWERS) >= 8
    assert len({a["answer"] for a in ANSWERS}) == len(ANSWERS)
    assert {a["problem"] for a in ANSWERS} <= {"circle_packing", "trivial"}
    assert {"diff", "rewrite"} <= {a["mode"] for a in ANSWERS}
    assert len({a["shape"].split("+")[0] for a in ANSWERS}) >= 4
    assert len({a["status"] for a in ANSWERS}) >= 2
    for case in ANSWERS:
        assert find_blocks(case["parent"]), "each parent is a program with EVOLVE-BLOCKs"


@pytest.mark.parametrize("case", ANSWERS, ids=[case_id(c) for c in ANSWERS])
def test_a_real_answer_gives_a_child_that_keeps_frozen_code_or_a_clear_refusal(
    case: dict,
) -> None:
    parent, answer = case["parent"], case["answer"]
    started = time.perf_counter()
    try:
        applied = apply_edit(parent, answer)
    except EditError as refused:
        message = str(refused)
        assert len(message) >= 20, f"a refusal too short to act on: {message!r}"
    else:
        assert frozen_parts(applied.source) == frozen_parts(parent)
        assert applied.kind in ("diff", "rewrite")
    assert time.perf_counter() - started < 2.0
