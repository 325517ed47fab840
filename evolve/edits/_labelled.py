"""Answers that label a pair of code fences "search" and "replace", read as the blocks they mean.

Asked for SEARCH/REPLACE blocks, models (small local ones most) often keep the two words and
drop the markers: a line ``SEARCH:`` (or ``**Search:**``, ``Original code:``, ``Find:``) over a
fence of the lines to change, then a line ``REPLACE:`` (``Replace with:``, ``Updated code:``)
over a fence of what goes there. Read as a rewrite, such an answer's last fence (a line or two)
would stand for the whole EVOLVE-BLOCK, and the call would be wasted on a child that cannot
parse or lost its functions. Each such pair is one SEARCH/REPLACE block, applied by the same
rules as a marked one (tolerant matching, REPLACE mapping, split).

Only a pair counts: a search label over one fence and a replace label over the very next one.
A label is the last non-blank line before its fence (and after the fence before it), short
(at most :data:`_MOST_WORDS` words once list markers, emphasis and a trailing colon are
dropped), and says one of the phrases below at its end ("Edit 2 - Search", "Here is the
original code"). A lone "New code:" over a whole program is no pair: it stays a rewrite.
Fences tagged as something other than code (``text``, ``json``, ``diff``...) never pair.
"""

from __future__ import annotations

from evoforge.evolve.edits._parse import MAX_BLOCKS, NOT_CODE_TAGS, EditBlock, EditError, Fence

_SEARCH_LABELS = frozenset(
    {
        *("search", "search for", "search block", "find", "find this", "replace this"),
        *("original", "original code", "old", "old code", "before", "from"),
        *("current", "current code", "existing", "existing code"),
    }
)
_REPLACE_LABELS = frozenset(
    {
        *("replace", "replace with", "replace it with", "replace block", "replacement"),
        *("with", "to", "after", "new", "new code", "updated", "updated code"),
        *("modified", "modified code", "changed", "changed code", "improved code"),
    }
)
_MOST_WORDS = 6
"""Longest label, in words: "here is the original code" is one, a sentence of prose is not."""


def labelled_blocks(lines: list[str], fences: list[Fence]) -> list[EditBlock]:
    """The SEARCH/REPLACE blocks that labelled fence pairs of an answer mean, in order.

    Args:
        lines: the answer's lines.
        fences: its fenced code blocks (:func:`~evoforge.evolve.edits._parse.fenced_blocks`).

    Raises:
        EditError: more than :data:`~evoforge.evolve.edits._parse.MAX_BLOCKS` pairs.
    """
    labels = _labels(lines, fences)
    blocks: list[EditBlock] = []
    i = 0
    while i + 1 < len(fences):
        first, second = fences[i], fences[i + 1]
        (kind, heading), (next_kind, _) = labels[i], labels[i + 1]
        if kind == "search" and next_kind == "replace" and _code(first) and _code(second):
            if len(blocks) == MAX_BLOCKS:
                raise EditError(
                    f"the answer has more than {MAX_BLOCKS} labelled SEARCH/REPLACE fence pairs;"
                    f" propose a focused change with at most {MAX_BLOCKS}"
                )
            path = first.info[len(first.tag) :].strip() if first.tag else ""
            number = len(blocks) + 1
            blocks.append(EditBlock(number, first.content, second.content, path or heading))
            i += 2
        else:
            i += 1
    return blocks


def _code(fence: Fence) -> bool:
    return fence.tag not in NOT_CODE_TAGS


def _labels(lines: list[str], fences: list[Fence]) -> list[tuple[str, str]]:
    """For each fence: what its label says ("search", "replace" or ""), and the prose line
    before the label (a file path heading a block of a repository bundle, or "")."""
    out: list[tuple[str, str]] = []
    after = 0  # the first line after the previous fence
    for fence in fences:
        prose = [line.strip() for line in lines[after : fence.line] if line.strip()]
        kind = _kind(prose[-1]) if prose else ""
        out.append((kind, prose[-2] if kind and len(prose) > 1 else ""))
        after = fence.end + 1
    return out


def _kind(line: str) -> str:
    """ "search", "replace" or "" for a label line such as ``**2. Replace with:**``."""
    text = "".join(c if c.isalpha() else " " for c in line.lower())
    words = text.split()
    if not words or len(words) > _MOST_WORDS:
        return ""
    for kind, phrases in (("search", _SEARCH_LABELS), ("replace", _REPLACE_LABELS)):
        if any(" ".join(words[-n:]) in phrases for n in (1, 2, 3)):
            return kind
    return ""
