"""The last matching rule: the one span of the regions clearly closest to a SEARCH text.

Small models copy context lines imperfectly: a space added around an operator, a comment
reworded, a variable renamed in one line. When no exact or normalised match exists anywhere,
the SEARCH text is compared with every span of the EVOLVE-BLOCK regions of ``len(search)``
lines and one line fewer or more, on lines stripped of their indentation and trailing
whitespace, by :class:`difflib.SequenceMatcher` ratio (``2 * matches / total characters``).
The best span is used only when

* its ratio is at least the threshold (``[search] fuzzy_threshold``, 0.9 by default), and
* every other span that does not overlap it is at least :data:`MARGIN` less similar: two
  near-equal candidates (a pattern repeated in the program) are refused as ambiguous, since
  editing the wrong copy would be a silent corruption, whereas a refusal costs one attempt.

A span never leaves its region, so a marker line and frozen code are never touched. Aider's
edit-block coder has a closest-span matcher too but leaves it switched off, and it takes the
best span however close the runner-up; the uniqueness margin and the region restriction are
what make the rule safe to use here.

Cost is bounded, whatever the answer: every window's ``quick_ratio`` (an upper bound of its
ratio) is computed at once with array operations, and only windows that could reach the
threshold are compared with ``ratio``, at most :data:`MAX_COMPARED` per window length and
block (more is refused: the SEARCH text resembles too many places); SEARCH texts over
:data:`MAX_LINES` lines or :data:`MAX_CHARS` characters are not matched approximately; and one
answer may spend at most :data:`LINE_BUDGET` scanned lines and :data:`CHAR_BUDGET` compared
characters over all its blocks, after which a block that needs this rule is refused with an
actionable error.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

from evoforge.evolve.edits._lines import Candidate, ProgramLines
from evoforge.evolve.edits._parse import EditBlock, EditError
from evoforge.evolve.edits._remap import ABOVE, remap

MARGIN = 0.02
"""How much less similar the best span's closest non-overlapping rival must be."""
MAX_LINES = 80
"""Longest SEARCH text (lines) matched approximately; longer ones are copied, not typed."""
MAX_CHARS = 4_000
"""Longest SEARCH text (stripped characters) matched approximately."""
MAX_COMPARED = 40
"""Most windows of one length compared with ``ratio`` for one block; a SEARCH text that could
be as close to more places than this is refused (real code gives a handful, see tests)."""
LINE_BUDGET = 30_000
"""Region lines one answer may scan approximately, over all its blocks (6 scans of a
5,000-line region, 100 of a 300-line one)."""
CHAR_BUDGET = 60_000
"""Characters one answer may compare with ``ratio``, over all its blocks (a few dozen blocks
of real code; ``ratio`` costs about 5 µs a character)."""


@dataclass
class FuzzyBudget:
    """What one answer has left of the approximate-matching budget (shared by its blocks)."""

    lines: int = LINE_BUDGET
    chars: int = CHAR_BUDGET


@dataclass(frozen=True)
class _Span:
    ratio: float
    first: int
    count: int

    def overlaps(self, other: _Span) -> bool:
        return self.first < other.first + other.count and other.first < self.first + self.count


def fuzzy_place(
    program: ProgramLines, block: EditBlock, threshold: float, budget: FuzzyBudget
) -> Candidate | None:
    """The candidate of the one clearly closest span, or None when there is none.

    Raises:
        EditError: two spans are about equally close, or the answer's budget is spent.
    """
    search = block.search.split("\n")[:-1]
    needle = "\n".join(line.strip() for line in search)
    if len(search) > MAX_LINES or len(needle) > MAX_CHARS or not needle.strip():
        return None
    spans = _scan(program, block, needle, len(search), threshold - MARGIN, budget)
    if not spans:
        return None
    spans.sort(key=lambda s: (-s.ratio, s.count != len(search), s.first))
    best = spans[0]
    if best.ratio < threshold:
        return None
    rival = next((s for s in spans[1:] if not s.overlaps(best)), None)
    if rival is not None and rival.ratio > best.ratio - MARGIN:
        raise EditError(
            f"block {block.number}: its SEARCH text was not found exactly, and the closest "
            f"spans are about equally close ({program.where(best.first, best.count)}: "
            f"{best.ratio:.0%} similar; {program.where(rival.first, rival.count)}: "
            f"{rival.ratio:.0%}); copy the lines exactly, with a few unchanged lines around "
            "the change, so the SEARCH text matches one place only"
        )
    if not program.inside(best.first, best.count):  # cannot happen: spans stay in runs
        return None
    found = program.raw[best.first : best.first + best.count]
    replace = block.replace.split("\n")[:-1]
    above = program.raw[max(best.first - ABOVE, 0) : best.first]
    mapped = remap(search, found, replace, program.raw, above=above, unsure=True)
    return Candidate(best.first, best.count, mapped.text, mapped.alternative)


def _scan(
    program: ProgramLines,
    block: EditBlock,
    needle: str,
    length: int,
    cut: float,
    budget: FuzzyBudget,
) -> list[_Span]:
    """Every window of the regions whose ratio is at least ``cut``."""
    stripped = [line.strip() for line in program.raw]
    matcher = SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(needle)  # the matcher caches what it learns of the SEARCH text
    spans: list[_Span] = []
    for first_line, stop in program.editable_runs():
        lines = stripped[first_line:stop]
        budget.lines -= len(lines)
        if budget.lines < 0:
            raise _exhausted(block)
        bounds = _QuickBounds(lines, needle)
        for count in (length, length - 1, length + 1):
            if count < 1 or count > len(lines):
                continue
            sizes, bound = bounds.of(count)
            close = np.flatnonzero(bound >= cut).tolist()
            if len(close) > MAX_COMPARED:
                raise _lookalikes(program, block, first_line, close)
            for i in close:
                budget.chars -= int(sizes[i]) + len(needle)
                if budget.chars < 0:
                    raise _exhausted(block)
                matcher.set_seq1("\n".join(lines[i : i + count]))
                ratio = matcher.ratio()
                if ratio >= cut:
                    spans.append(_Span(ratio, first_line + i, count))
    return spans


class _QuickBounds:
    """``quick_ratio`` of the SEARCH text against every window of a run of lines, at once.

    ``quick_ratio`` bounds ``ratio`` from above by counting the characters the two texts have
    in common regardless of order. Per-line character counts over the SEARCH text's alphabet,
    summed by prefix sums, give it for all windows of one length in a few array operations, so
    only the windows that could reach the threshold are compared one by one.
    """

    def __init__(self, lines: list[str], needle: str) -> None:
        self.alphabet = sorted(set(needle) - {"\n"})
        self.wanted = np.array([needle.count(c) for c in self.alphabet], dtype=np.int64)
        self.needle_lines = needle.count("\n") + 1
        self.needle_size = len(needle)
        lengths = np.array([len(line) for line in lines], dtype=np.int64)
        self.size_prefix = np.concatenate(([0], np.cumsum(lengths)))
        codes = np.frombuffer("".join(lines).encode("utf-32-le"), dtype=np.uint32)
        known = [ord(c) for c in self.alphabet]
        k = len(known)
        table = np.full(max([*known, int(codes.max(initial=0))]) + 1, -1, dtype=np.int64)
        table[known] = np.arange(k)
        index = table[codes]  # each character's place in the alphabet, -1 when absent
        hit = index >= 0
        owner = np.repeat(np.arange(len(lines)), lengths)
        counts = np.bincount(owner[hit] * k + index[hit], minlength=len(lines) * k)
        per_line = counts.reshape(len(lines), k)
        self.count_prefix = np.vstack([np.zeros((1, k), dtype=np.int64), np.cumsum(per_line, 0)])

    def of(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """For windows of ``count`` lines: their sizes (joined by newlines) and bounds."""
        sizes = self.size_prefix[count:] - self.size_prefix[:-count] + (count - 1)
        window = self.count_prefix[count:] - self.count_prefix[:-count]
        common = np.minimum(window, self.wanted).sum(axis=1)
        common += min(count, self.needle_lines) - 1  # the newlines
        total = sizes + self.needle_size
        bound = np.where(total > 0, 2.0 * common / np.maximum(total, 1), 0.0)
        return sizes, bound


def _lookalikes(
    program: ProgramLines, block: EditBlock, first_line: int, close: list[int]
) -> EditError:
    some = ", ".join(f"{first_line + i + 1}" for i in close[:4])
    return EditError(
        f"block {block.number}: its SEARCH text was not found exactly, and it resembles too "
        f"many places to be matched approximately (spans starting on lines {some}, ...); copy "
        "the lines exactly, with their indentation"
    )


def _exhausted(block: EditBlock) -> EditError:
    first = next((ln.strip() for ln in block.search.split("\n") if ln.strip()), "")
    return EditError(
        f"block {block.number}: its SEARCH text was not found in the current program "
        f"(first line: {first[:120]!r}), and the answer is too large to look for an "
        "approximate match; copy the lines exactly, with their indentation"
    )
