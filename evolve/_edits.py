"""Parse a model's answer and apply it to the parent program.

An answer is either a *diff* (one or more SEARCH/REPLACE blocks in the aider/AlphaEvolve
format) or a *rewrite* (no block, but a fenced code block holding the new program). A crossover
is not a third format: it is a diff or a rewrite whose content came from another program.

Only text inside EVOLVE-BLOCK regions may change; everything here enforces it and explains
every refusal in an :class:`EditError` that a model (or a person) can act on.

Everything is line-based and linear in the size of the answer: no regular expressions, so a
hostile answer cannot trigger catastrophic backtracking.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Literal

from evoforge.problems import END_MARKER, START_MARKER, Block, BlockError, find_blocks

MAX_BLOCKS = 64
"""Most SEARCH/REPLACE blocks accepted in one answer."""

_SEARCH, _DIVIDER, _REPLACE = "SEARCH", "=======", "REPLACE"
_PYTHON_TAGS = frozenset({"python", "py", "python3"})
_MAX_FUZZY_CANDIDATES = 256  # indentation-insensitive candidates verified per block

FORMAT_HINT = (
    "A valid answer has one or more blocks like\n"
    "<<<<<<< SEARCH\n"
    "lines copied exactly from the current program\n"
    "=======\n"
    "the lines that replace them\n"
    ">>>>>>> REPLACE\n"
    "or the whole new program in one ```python fenced block."
)


class EditError(ValueError):
    """A model's answer cannot be applied; the message says why and what a valid one is."""


@dataclass(frozen=True)
class AppliedEdit:
    """The child program produced from an answer.

    Attributes:
        source: the child's full source.
        kind: ``"diff"`` for SEARCH/REPLACE blocks, ``"rewrite"`` for a whole program.
        n_blocks: number of SEARCH/REPLACE blocks applied (0 for a rewrite).
    """

    source: str
    kind: Literal["diff", "rewrite"]
    n_blocks: int


@dataclass(frozen=True)
class _EditBlock:
    number: int  # 1-based, in answer order
    search: str
    replace: str


@dataclass(frozen=True)
class Fence:
    """A fenced code block of a Markdown text: its info-string tag and its content."""

    tag: str
    content: str
    line: int  # 0-based index of the opening fence line


def apply_edit(parent: str, answer: str) -> AppliedEdit:
    """Apply a model's ``answer`` to ``parent`` and return the child.

    A diff is applied block by block to the evolving text; each SEARCH text must match
    exactly or, failing that, with trailing whitespace ignored per line, or with a uniform
    indentation difference (the REPLACE text is then re-indented by the same amount). When
    the SEARCH text occurs several times, the first occurrence that lies inside an
    EVOLVE-BLOCK region is used. A rewrite keeps the parent's frozen parts byte for byte.

    Raises:
        EditError: the answer is unusable; the message names the block and the reason.
        BlockError: ``parent`` itself has no valid EVOLVE-BLOCK regions (a problem-spec bug,
            not a model mistake).
    """
    regions = find_blocks(parent, origin="parent program")
    lines = answer.split("\n")
    blocks = _parse_blocks(lines)
    if blocks:
        source = _apply_diff(parent, blocks)
        kind: Literal["diff", "rewrite"] = "diff"
    else:
        source = _apply_rewrite(parent, regions, lines)
        kind = "rewrite"
    if source == parent:
        raise EditError(
            "the edit changes nothing: the result is identical to the current program; "
            "propose a change to the code between the EVOLVE-BLOCK markers"
        )
    return AppliedEdit(source=source, kind=kind, n_blocks=len(blocks))


# --- parsing -------------------------------------------------------------------------------


def _marker(line: str, char: str, word: str) -> bool:
    """``<<<<<<< SEARCH`` / ``>>>>>>> REPLACE`` (5-9 marker characters, any spacing)."""
    text = line.strip()
    n = len(text) - len(text.lstrip(char))
    return 5 <= n <= 9 and text[n:].strip() == word


def _divider(line: str) -> bool:
    text = line.strip()
    return 5 <= len(text) <= 9 and text == "=" * len(text)


def is_format_line(line: str) -> bool:
    """Whether the answer parser would read ``line`` as a SEARCH, divider or REPLACE line."""
    return _marker(line, "<", _SEARCH) or _divider(line) or _marker(line, ">", _REPLACE)


def _section(lines: list[str]) -> str:
    """Join a block section's lines; drop a ``` fence wrapped around the whole section."""
    if len(lines) >= 2 and lines[0].lstrip().startswith("```") and lines[-1].strip() == "```":
        lines = lines[1:-1]
    return "".join(line + "\n" for line in lines)


def _parse_blocks(lines: list[str]) -> list[_EditBlock]:
    """The SEARCH/REPLACE blocks of an answer; prose and fences around them are ignored."""
    blocks: list[_EditBlock] = []
    state = "prose"
    search: list[str] = []
    replace: list[str] = []
    opened = 0
    for lineno, line in enumerate(lines, start=1):
        is_search = "<" in line and _marker(line, "<", _SEARCH)
        is_replace = ">" in line and _marker(line, ">", _REPLACE)
        number = len(blocks) + 1
        if state == "prose":
            if is_search:
                if number > MAX_BLOCKS:
                    raise EditError(
                        f"the answer has more than {MAX_BLOCKS} SEARCH/REPLACE blocks; propose "
                        f"a focused change with at most {MAX_BLOCKS} blocks, or answer with the "
                        "whole program in one ```python fenced block"
                    )
                state, search, replace, opened = "search", [], [], lineno
            elif is_replace:
                raise EditError(
                    f"answer line {lineno}: '>>>>>>> REPLACE' without a '<<<<<<< SEARCH' "
                    f"before it. {FORMAT_HINT}"
                )
        elif state == "search":
            if "=" in line and _divider(line):
                state = "replace"
            elif is_search or is_replace:
                raise EditError(
                    f"block {number} (answer line {opened}): its SEARCH section has no "
                    f"'=======' line before answer line {lineno}. {FORMAT_HINT}"
                )
            else:
                search.append(line)
        else:  # replace
            if is_replace:
                blocks.append(_EditBlock(number, _section(search), _section(replace)))
                state = "prose"
            elif is_search:
                raise EditError(
                    f"block {number} (answer line {opened}): it is not closed with "
                    f"'>>>>>>> REPLACE' before the next SEARCH on answer line {lineno}. "
                    f"{FORMAT_HINT}"
                )
            else:
                replace.append(line)
    if state != "prose":
        raise EditError(
            f"block {len(blocks) + 1} (answer line {opened}): it is never closed with "
            f"'>>>>>>> REPLACE' (was the answer cut off?). {FORMAT_HINT}"
        )
    return blocks


def fenced_blocks(lines: list[str]) -> list[Fence]:
    """Fenced code blocks (``` or ~~~, CommonMark closing rule) in order; unclosed ones dropped."""
    fences: list[Fence] = []
    i, n = 0, len(lines)
    while i < n:
        text = lines[i].strip()
        char = text[:1]
        if char in ("`", "~") and text.startswith(char * 3):
            width = len(text) - len(text.lstrip(char))
            tag = text[width:].strip().split(" ", 1)[0].lower() if text[width:].strip() else ""
            if char == "`" and "`" in text[width:]:
                i += 1  # an inline code span, not a fence
                continue
            for j in range(i + 1, n):
                close = lines[j].strip()
                if close.startswith(char * width) and close == char * len(close):
                    body = "".join(line + "\n" for line in lines[i + 1 : j])
                    fences.append(Fence(tag=tag, content=body, line=i))
                    i = j
                    break
            else:
                return fences  # unclosed: the rest is not a code block we can trust
        i += 1
    return fences


# --- diffs ---------------------------------------------------------------------------------


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _region_lines(text: str, regions: list[Block]) -> str:
    spans = []
    for region in regions:
        first = _line_of(text, region.start)
        last = max(first, _line_of(text, max(region.start, region.end - 1)))
        spans.append(f"{first}-{last}" if last > first else f"{first}")
    return "lines " + ", ".join(spans)


def _apply_diff(parent: str, blocks: list[_EditBlock]) -> str:
    text = parent
    for block in blocks:
        if not block.search.strip():
            raise EditError(
                f"block {block.number}: its SEARCH section is empty; copy the lines to change "
                "from the current program into it (to insert code, SEARCH for the line before "
                "the insertion point and repeat that line in REPLACE)"
            )
        if START_MARKER in block.replace or END_MARKER in block.replace:
            raise EditError(
                f"block {block.number}: its REPLACE text contains an EVOLVE-BLOCK marker; the "
                "marker lines are fixed: change only the code between them"
            )
        try:
            regions = find_blocks(text, origin="program")
        except BlockError as exc:  # cannot happen: REPLACE never holds a marker
            raise EditError(f"block {block.number}: {exc}") from exc
        start, end, replacement = _locate(text, block, regions)
        text = text[:start] + replacement + text[end:]
    return text


def _inside(regions: list[Block], start: int, end: int) -> bool:
    return any(region.contains(start, end) for region in regions)


def _locate(text: str, block: _EditBlock, regions: list[Block]) -> tuple[int, int, str]:
    """Where block's SEARCH text lies in ``text``: ``(start, end, replacement)``."""
    outside: tuple[int, int] | None = None
    for matcher in (_exact_matches, _rstrip_matches, _dedent_matches):
        for start, end, replacement in matcher(text, block):
            if _inside(regions, start, end):
                return start, end, replacement
            outside = outside or (start, end)
        if outside is not None:
            break  # a weaker matcher must not find a different place than a stronger one
    if outside is None:
        first = next((ln.strip() for ln in block.search.split("\n") if ln.strip()), "")
        raise EditError(
            f"block {block.number}: its SEARCH text was not found in the current program "
            f"(first line: {first[:120]!r}); copy the lines exactly, with their indentation, "
            "and apply earlier blocks' changes first"
        )
    start, end = outside
    first, last = _line_of(text, start), _line_of(text, max(start, end - 1))
    where = f"lines {first}-{last}" if last > first else f"line {first}"
    touched = text[text.rfind("\n", 0, start) + 1 : end]
    if START_MARKER in touched or END_MARKER in touched:
        reason = "which include an EVOLVE-BLOCK marker line"
    else:
        reason = f"outside the EVOLVE-BLOCK regions ({_region_lines(text, regions)})"
    raise EditError(
        f"block {block.number}: its SEARCH text is on {where}, {reason}; only code between the "
        "markers may change"
    )


def _exact_matches(text: str, block: _EditBlock):
    """Occurrences starting at a line start; the replacement is used verbatim."""
    needle = block.search
    pos = text.find(needle)
    while pos >= 0:
        if pos == 0 or text[pos - 1] == "\n":
            yield pos, pos + len(needle), block.replace
        pos = text.find(needle, pos + 1)


class _Lines:
    """A text's lines with their offsets, and a normalised copy for linear-time search."""

    def __init__(self, text: str, normalise) -> None:
        self.raw = text.split("\n")
        self.starts = [0]
        for line in self.raw[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)
        self.norm = "\n".join(normalise(line) for line in self.raw)
        self.norm_starts = [0]
        for line in self.norm.split("\n")[:-1]:
            self.norm_starts.append(self.norm_starts[-1] + len(line) + 1)

    def find_lines(self, needle_lines: list[str]):
        """Indices of lines where ``needle_lines`` (normalised) match, in order."""
        needle = "\n".join(needle_lines)
        pos = self.norm.find(needle)
        while pos >= 0:
            i = bisect.bisect_left(self.norm_starts, pos)
            if i < len(self.norm_starts) and self.norm_starts[i] == pos:
                end = pos + len(needle)
                if end == len(self.norm) or self.norm[end] == "\n":
                    yield i
            pos = self.norm.find(needle, pos + 1)

    def span(self, first: int, count: int) -> tuple[int, int]:
        """Offsets of ``count`` whole lines from ``first``, including the final newline."""
        last = first + count - 1
        return self.starts[first], self.starts[last] + len(self.raw[last]) + 1


def _search_lines(search: str) -> list[str]:
    return search.split("\n")[:-1]  # sections always end with "\n"


def _rstrip_matches(text: str, block: _EditBlock):
    """Line-aligned matches ignoring trailing whitespace on every line."""
    needle = [line.rstrip() for line in _search_lines(block.search)]
    lines = _Lines(text, str.rstrip)
    for first in lines.find_lines(needle):
        start, end = lines.span(first, len(needle))
        yield start, min(end, len(text)), block.replace


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _dedent_matches(text: str, block: _EditBlock):
    """Matches that differ by one uniform indentation (prefix added to or removed from all)."""
    search = _search_lines(block.search)
    needle = [line.strip() for line in search]
    lines = _Lines(text, str.strip)
    for n, first in enumerate(lines.find_lines(needle)):
        if n >= _MAX_FUZZY_CANDIDATES:
            return
        found = lines.raw[first : first + len(search)]
        delta = _uniform_delta(search, found)
        if delta is None:
            continue
        replacement = _reindent(block.replace, *delta)
        if replacement is None:
            continue
        start, end = lines.span(first, len(search))
        yield start, min(end, len(text)), replacement


def _uniform_delta(search: list[str], found: list[str]) -> tuple[str, str] | None:
    """``(remove, add)`` such that every non-blank SEARCH line re-indented equals ``found``."""
    pairs = [(s, f) for s, f in zip(search, found, strict=True) if s.strip()]
    if not pairs:
        return None
    s0, f0 = _indent(pairs[0][0]), _indent(pairs[0][1])
    if f0.startswith(s0):
        remove, add = "", f0[len(s0) :]
    elif s0.startswith(f0):
        remove, add = s0[len(f0) :], ""
    else:
        return None
    for s, f in pairs:
        si, fi = _indent(s), _indent(f)
        if not si.startswith(remove):
            return None
        if add + si[len(remove) :] != fi:
            return None
    return remove, add


def _reindent(text: str, remove: str, add: str) -> str | None:
    out = []
    for line in _search_lines(text):
        if not line.strip():
            out.append(line)
        elif line.startswith(remove):
            out.append(add + line[len(remove) :])
        else:
            return None  # cannot shift this line by the same amount
    return "".join(line + "\n" for line in out)


# --- rewrites ------------------------------------------------------------------------------


def _rewrite_code(lines: list[str]) -> str:
    fences = fenced_blocks(lines)
    if not fences:
        raise EditError(
            f"the answer has no SEARCH/REPLACE block and no fenced code block. {FORMAT_HINT}"
        )
    python = [fence for fence in fences if fence.tag in _PYTHON_TAGS]
    return (python or fences)[-1].content


def _apply_rewrite(parent: str, regions: list[Block], lines: list[str]) -> str:
    code = _rewrite_code(lines)
    if not code.strip():
        raise EditError("the rewrite's code block is empty; put the whole new program in it")
    if START_MARKER in code or END_MARKER in code:
        return _splice_marked(parent, regions, code)
    if len(regions) != 1:
        raise EditError(
            f"the rewrite has no EVOLVE-BLOCK markers but the current program has "
            f"{len(regions)} regions; rewrite the whole program, keeping every marker line and "
            "the code outside the regions unchanged"
        )
    region = regions[0]
    return (
        parent[: region.start]
        + _fit_indent(parent[region.start : region.end], code)
        + (parent[region.end :])
    )


def _fit_indent(old: str, new: str) -> str:
    """Indent ``new`` like ``old`` when the region sits in an indented body and new is flush."""

    def common(text: str) -> str | None:
        indents = [_indent(line) for line in text.split("\n") if line.strip()]
        return min(indents, key=len) if indents else None

    old_indent, new_indent = common(old), common(new)
    if old_indent and new_indent == "":
        new = "".join(
            (old_indent + line if line.strip() else line) + "\n" for line in _search_lines(new)
        )
    return new


def _splice_marked(parent: str, regions: list[Block], code: str) -> str:
    """Take the rewrite's region contents; its frozen parts must match the parent's."""
    try:
        new_regions = find_blocks(code, origin="the rewritten program")
    except BlockError as exc:
        raise EditError(f"{exc}; keep the EVOLVE-BLOCK marker lines exactly as they are") from exc
    if len(new_regions) != len(regions):
        raise EditError(
            f"the rewritten program has {len(new_regions)} EVOLVE-BLOCK regions but the current "
            f"program has {len(regions)}; keep every marker line"
        )
    old_frozen = _frozen_lines(parent, regions)
    new_frozen = _frozen_lines(code, new_regions)
    for (old_no, old_line), (new_no, new_line) in zip(old_frozen, new_frozen, strict=False):
        if old_line != new_line:
            raise EditError(
                f"the rewrite changes frozen code: its line {new_no} is {new_line[:120]!r} "
                f"where the current program's line {old_no} is {old_line[:120]!r}; only code "
                "between the EVOLVE-BLOCK markers may change"
            )
    if len(old_frozen) != len(new_frozen):
        longer = old_frozen if len(old_frozen) > len(new_frozen) else new_frozen
        no, line = longer[min(len(old_frozen), len(new_frozen))]
        which = "current program" if longer is old_frozen else "rewrite"
        raise EditError(
            f"the rewrite changes frozen code: line {no} of the {which} ({line[:120]!r}) has no "
            "counterpart; only code between the EVOLVE-BLOCK markers may change"
        )
    pieces, prev = [], 0
    for old, new in zip(regions, new_regions, strict=True):
        pieces.append(parent[prev : old.start])
        pieces.append(code[new.start : new.end])
        prev = old.end
    pieces.append(parent[prev:])
    return "".join(pieces)


def _frozen_lines(text: str, regions: list[Block]) -> list[tuple[int, str]]:
    """Frozen lines as ``(line number, text without trailing whitespace)``.

    A final empty line (the text ends with a newline) is not a line of its own, so a program
    whose last line lacks its newline compares equal to one that has it.
    """
    raw = text.split("\n")
    if raw[-1] == "":
        raw.pop()
    out: list[tuple[int, str]] = []
    offset, r = 0, 0
    for number, line in enumerate(raw, start=1):
        while r < len(regions) and regions[r].end <= offset:
            r += 1
        if not (r < len(regions) and regions[r].start <= offset < regions[r].end):
            out.append((number, line.rstrip()))
        offset += len(line) + 1
    return out
