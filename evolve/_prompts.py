"""Prompt building: the parent, its feedback and inspirations, and the answer format.

The same messages go to every model, the offline one included: it reads the program after
``CURRENT_PROGRAM_HEADING`` and the ones after ``INSPIRATION_HEADING``, as an LLM would.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evolve._offline import CURRENT_PROGRAM_HEADING, INSPIRATION_HEADING

if TYPE_CHECKING:
    from archive import Program
    from problems import Problem

_ARTIFACT_CHARS = 1500  # per artifact: enough for a traceback tail, not a flood

SYSTEM_PROMPT = """\
You are an expert programmer improving a program by evolution. Each answer proposes one \
focused change to the current program. Only code between EVOLVE-BLOCK-START and \
EVOLVE-BLOCK-END lines may change; everything else is fixed."""

ANSWER_FORMAT = """\
Answer with one or more SEARCH/REPLACE blocks, each exactly like this:

<<<<<<< SEARCH
lines copied exactly from the current program
=======
the lines that replace them
>>>>>>> REPLACE

The SEARCH text must match the current program exactly and lie inside an EVOLVE-BLOCK. \
Alternatively, answer with the whole new program in one ```python fenced block."""


def build_messages(
    problem: Problem, parent: Program, inspirations: Sequence[Program]
) -> list[dict[str, str]]:
    """Chat messages asking for a change to ``parent``."""
    objectives = ", ".join(
        f"{o.name} ({o.direction}{', primary' if i == 0 else ''})"
        for i, o in enumerate(problem.objectives)
    )
    parts = [f"# Problem: {problem.name}"]
    if problem.description:
        parts.append(problem.description)
    parts += [
        f"Objectives: {objectives}.",
        "",
        CURRENT_PROGRAM_HEADING,
        _describe(parent),
        _fenced(parent.source or ""),
    ]
    feedback = _feedback(parent)
    if feedback:
        parts += ["Feedback from its evaluation:", feedback]
    for number, other in enumerate(inspirations, start=1):
        parts += [
            "",
            f"{INSPIRATION_HEADING} {number}",
            _describe(other),
            _fenced(other.source or ""),
        ]
    parts += [
        "",
        "## Task",
        f"Improve the primary objective ({problem.primary.name}) of the current program.",
        ANSWER_FORMAT,
    ]
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(parts)},
    ]


def _describe(program: Program) -> str:
    metrics = {k: v for k, v in program.metrics.items() if isinstance(v, (int, float, str, bool))}
    return (
        f"status: {program.status}; score: {program.score}; "
        f"metrics: {json.dumps(metrics, default=str)[:500]}"
    )


def _feedback(program: Program) -> str:
    return "\n".join(
        f"[{name}]\n{text[-_ARTIFACT_CHARS:]}" for name, text in program.artifacts.items() if text
    )


def _fenced(source: str) -> str:
    fence = "````" if "```" in source else "```"
    return f"{fence}python\n{source.rstrip()}\n{fence}"
