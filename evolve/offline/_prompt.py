"""How the offline model reads a chat prompt, without importing litellm.

Shared by the litellm provider (:mod:`evoforge.evolve.offline._provider`) and by anything else that
answers like the offline model (the tests' OpenAI-compatible server), so both read a prompt the
same way and draw the same random stream for the same call.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from evoforge.evolve.edits import fenced_blocks
from evoforge.evolve.prompts import CURRENT_PROGRAM_HEADING, INSPIRATION_HEADING


def read_prompt(messages: Sequence[dict[str, Any]]) -> tuple[str | None, list[str]]:
    """The program to change and the inspirations, read from the last user message.

    The program is the first fenced code block after a line starting with
    :data:`CURRENT_PROGRAM_HEADING`; each inspiration is the first fenced code block after a
    line starting with :data:`INSPIRATION_HEADING` (and before the next such heading).
    """
    text = next((message_text(m) for m in reversed(messages) if m.get("role") == "user"), "")
    lines = text.split("\n")
    headings = [
        (i, line)
        for i, line in enumerate(lines)
        if line.startswith((CURRENT_PROGRAM_HEADING, INSPIRATION_HEADING))
    ]
    fences = fenced_blocks(lines)
    program: str | None = None
    inspirations: list[str] = []
    for k, (at, heading) in enumerate(headings):
        until = headings[k + 1][0] if k + 1 < len(headings) else len(lines)
        body = next((f.content for f in fences if at < f.line < until), None)
        if body is None:
            continue
        if heading.startswith(CURRENT_PROGRAM_HEADING):
            program = body if program is None else program
        else:
            inspirations.append(body)
    return program, inspirations


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))


def call_rng(messages: Sequence[dict[str, Any]], seed: Any) -> np.random.Generator:
    digest = hashlib.sha256(
        json.dumps(list(messages), sort_keys=True, default=str).encode()
    ).digest()
    entropy = [int.from_bytes(digest[:16], "little")]
    if seed is not None:
        entropy.insert(0, int(seed) & (2**128 - 1))
    return np.random.default_rng(np.random.SeedSequence(entropy))
