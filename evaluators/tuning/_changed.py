"""The constants a model's edit changed, as knobs to tune (``[search] tune_changed``).

A model that changes ``0.3`` to ``0.35`` has guessed a direction and a step, not a value: the
best value is usually near it, and a few evaluations find it far cheaper than more model calls
do (Magellan evolves code and tunes its constants; evoforge's declared knobs,
:mod:`evoforge.evaluators.tuning._knobs`, need the program to name them). So a Python child
whose edit replaced float literals of its parent with other float literals, inside an
EVOLVE-BLOCK, gets those literals as knobs: each tuned within a range around the model's value
on the scale of the model's own step (at least 5 % of the value), by the same TPE trials as
declared knobs.

Only float literals replaced by float literals count: an int is a count, an index or a size
more often than a quantity, and a literal the edit added (not replaced) has no step to scale
by. Comparing token streams (Python's :mod:`tokenize`) rather than lines means a constant
moved with its line, or a reformatted expression, is not mistaken for a change.
"""

from __future__ import annotations

import ast
import difflib
import io
import tokenize

from evoforge.evaluators.tuning._knobs import Knob
from evoforge.problems import BlockError, find_blocks

MAX_CHANGED = 4
"""Most constants tuned per child (the first ones the edit changed): TPE learns little from a
few trials in many dimensions."""
RANGE_STEPS = 3.0
"""A changed constant's range: its new value ± this many times the model's step."""
MIN_STEP = 0.05
"""The least step, as a share of the new value (a model that changed 1.0 to 1.0000001)."""

_SKIPPED = frozenset(
    {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
)
_Token = tuple[int, str, int, int]  # type, text, start and end offsets in the source


def changed_constants(parent: str, child: str) -> list[Knob]:
    """Knobs for the float literals of ``child`` (a Python program) that replaced float
    literals of ``parent``, inside an EVOLVE-BLOCK, at most :data:`MAX_CHANGED`; none when
    either program does not tokenize or ``child`` has no valid EVOLVE-BLOCK."""
    before, after = _tokens(parent), _tokens(child)
    if before is None or after is None:
        return []
    try:
        regions = find_blocks(child)
    except BlockError:
        return []
    matcher = difflib.SequenceMatcher(
        None, [t[1] for t in before], [t[1] for t in after], autojunk=False
    )
    knobs: list[Knob] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace" or i2 - i1 != j2 - j1:
            continue  # an edit that changed the shape around it is not a constant's change
        for old, new in zip(before[i1:i2], after[j1:j2], strict=True):
            was, now = _float(old), _float(new)
            if was is None or now is None or was == now:
                continue
            if not any(region.contains(new[2], new[3]) for region in regions):
                continue
            step = max(abs(now - was), MIN_STEP * abs(now))
            line = child.count("\n", 0, new[2]) + 1
            column = new[2] - (child.rfind("\n", 0, new[2]) + 1) + 1
            knobs.append(
                Knob(
                    f"line {line}:{column}",  # where the literal is, as an editor says it
                    "float",
                    now,
                    low=now - RANGE_STEPS * step,
                    high=now + RANGE_STEPS * step,
                    start=new[2],
                    end=new[3],
                )
            )
            if len(knobs) == MAX_CHANGED:
                return knobs
    return knobs


def _tokens(source: str) -> list[_Token] | None:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    tokens: list[_Token] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in _SKIPPED:
                continue
            offset = starts[token.start[0] - 1] + token.start[1]
            tokens.append((token.type, token.string, offset, offset + len(token.string)))
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return None
    return tokens


def _float(token: _Token) -> float | None:
    """The value of a float literal token (``0.3``, ``1e-3``; not ``3``, ``3j``)."""
    if token[0] != tokenize.NUMBER:
        return None
    try:
        value = ast.literal_eval(token[1])
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, float) else None
