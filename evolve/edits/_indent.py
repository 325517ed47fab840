"""Indentation arithmetic: columns, the program's style, and re-indenting a REPLACE text.

A model's indentation is often wrong in one of a few ways: tabs where the program has spaces
(or the reverse), every line shifted by the same amount, or every line flush left. The helpers
here turn a REPLACE text written with such indentation into one written the program's way, so
the child stays consistent with the lines around the edit. Only *leading* whitespace is ever
touched: a tab inside a line (in a string literal) is never rewritten.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

TAB_WIDTHS = (4, 8)
"""Tab widths tried when a model's tabs meet a program's spaces (or the reverse)."""

_OPENERS = (":", "{", "(", "[")  # a line ending so opens a deeper level (Python, C, brackets)


def indent_of(line: str) -> str:
    """The leading whitespace of ``line``."""
    return line[: len(line) - len(line.lstrip())]


def columns(indent: str, tab_width: int) -> int:
    """The display width of leading whitespace, tabs advancing to the next multiple."""
    col = 0
    for char in indent:
        col = (col // tab_width + 1) * tab_width if char == "\t" else col + 1
    return col


def normalise(line: str, tab_width: int) -> str:
    """``line`` with its leading tabs expanded and its trailing whitespace (``\\r``) removed."""
    body = line.strip()
    return " " * columns(indent_of(line), tab_width) + body if body else ""


def render(cols: int, tabs: bool, tab_width: int) -> str:
    """Indentation of ``cols`` columns written with tabs (then spaces) or with spaces only."""
    return "\t" * (cols // tab_width) + " " * (cols % tab_width) if tabs else " " * cols


def uses_tabs(found: Sequence[str], program_lines: Sequence[str]) -> bool:
    """Whether the program indents with tabs: judged on the found lines, else the program."""
    for lines in (found, program_lines):
        for line in lines:
            indent = indent_of(line)
            if indent and line.strip():
                return "\t" in indent
    return False


def indent_unit(found: list[str], tabs: bool, tab_width: int) -> str:
    """One level of indentation: a tab, or the smallest step between the found lines' levels."""
    if tabs:
        return "\t"
    levels = sorted({columns(indent_of(line), tab_width) for line in found if line.strip()})
    steps = [b - a for a, b in zip(levels, levels[1:], strict=False) if b > a]
    return " " * (min(steps) if steps else 4)


def opens(line: str) -> bool:
    """Whether ``line`` opens a deeper level: it ends with ``:`` or an opening bracket (a
    trailing ``#`` comment after two spaces aside)."""
    code = line.split("  #", 1)[0].rstrip()
    return code.endswith(_OPENERS)


def step_unit(lines: Iterable[str], tab_width: int) -> int | None:
    """The most common step in columns from a line that opens a level to the deeper line
    after it: the indentation unit of code whose continuation lines make the smallest step
    misleading. None when no line opens a level."""
    steps: Counter[int] = Counter()
    prev: str | None = None
    for line in lines:
        if not line.strip():
            continue
        if prev is not None and opens(prev):
            step = columns(indent_of(line), tab_width) - columns(indent_of(prev), tab_width)
            if step > 0:
                steps[step] += 1
        prev = line
    return steps.most_common(1)[0][0] if steps else None


def line_ending_fix(replace: list[str], found: list[str]) -> list[str]:
    """Drop the ``\\r`` a CRLF answer leaves on REPLACE lines when the program has none."""
    if any(line.endswith("\r") for line in found):
        return replace
    return [line.rstrip("\r") for line in replace]


def column_delta(search: list[str], found: list[str], tab_width: int) -> int | None:
    """The one column shift that turns every non-blank SEARCH line's indentation into the found
    line's, or None when the shift differs between lines (the SEARCH's relative indentation is
    wrong)."""
    deltas = {
        columns(indent_of(f), tab_width) - columns(indent_of(s), tab_width)
        for s, f in zip(search, found, strict=True)
        if s.strip()
    }
    return deltas.pop() if len(deltas) == 1 else None


def shift(replace: list[str], delta: int, tabs: bool, tab_width: int) -> list[str] | None:
    """REPLACE lines moved ``delta`` columns and re-written in the program's style; None when a
    line would move left of column 0 (it was less indented than the SEARCH text)."""
    out = []
    for line in replace:
        body = line.lstrip()
        if not body.strip():
            out.append(line.strip(" \t"))
            continue
        cols = columns(indent_of(line), tab_width) + delta
        if cols < 0:
            return None
        out.append(render(cols, tabs, tab_width) + body)
    return out


def prefix_delta(search: list[str], found: list[str]) -> tuple[str, str] | None:
    """``(remove, add)`` such that every non-blank SEARCH line re-indented equals ``found``: the
    character-exact uniform shift (no tab arithmetic), the only one ``tolerant=False`` allows."""
    pairs = [(s, f) for s, f in zip(search, found, strict=True) if s.strip()]
    if not pairs:
        return None
    s0, f0 = indent_of(pairs[0][0]), indent_of(pairs[0][1])
    if f0.startswith(s0):
        remove, add = "", f0[len(s0) :]
    elif s0.startswith(f0):
        remove, add = s0[len(f0) :], ""
    else:
        return None
    for s, f in pairs:
        si, fi = indent_of(s), indent_of(f)
        if not si.startswith(remove) or add + si[len(remove) :] != fi:
            return None
    return remove, add


def prefix_shift(replace: list[str], remove: str, add: str) -> list[str] | None:
    """REPLACE lines with ``remove`` taken off and ``add`` put on; None if a line lacks it."""
    out = []
    for line in replace:
        if not line.strip():
            out.append(line)
        elif line.startswith(remove):
            out.append(add + line[len(remove) :])
        else:
            return None
    return out


def lost_indent(search: list[str], found: list[str]) -> bool:
    """Whether the model dropped all indentation: SEARCH flush left, the program's lines not."""
    return all(not indent_of(s) for s in search if s.strip()) and any(
        indent_of(f) for f in found if f.strip()
    )
