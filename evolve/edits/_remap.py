"""Writing a REPLACE text the program's way, line by line, once its SEARCH text was found.

A tolerant rule finds a SEARCH text whose whitespace differs from the program's (tabs for
spaces, two spaces a level for four, indentation dropped or shifted, a context line off by a
space). The REPLACE text was written the same way, so it is mapped the same way before it is
pasted; pasted as written, its lines would disagree with the program's around them (a Python
``IndentationError``, or code silently moved into another body):

* each REPLACE line is paired with the SEARCH line it stands for (same text once stripped, or
  its counterpart in a line alignment: :mod:`difflib` on stripped lines), and that SEARCH line
  with the program line it was found on (the same alignment, for the fuzzy rule's spans);
* a paired line the author left unchanged (same text, same indentation relative to its SEARCH
  line) is the program's line, byte for byte: indentation, trailing whitespace, ``\\r``;
* a changed or moved paired line takes its program line's indentation, moved by as many
  levels as the author moved it, in the program's unit (tabs or spaces, 2 or 4);
* a new line keeps the author's indentation relative to the paired lines, converted the
  same way (kept as written when the author indented exactly as the program does: only
  trailing whitespace differed, and a line in a string or aligned with a bracket is not
  rounded to a level).

Levels are converted by fitting ``program = k * author + c`` over the paired lines, ``k`` the
program's unit over an author's (1, 2, 3, 4 or 8 columns): 1 for tabs for spaces or a uniform
shift, 2 for an author who indents by two where the program indents by four. One line that
does not fit (a context line indented off by one) is tolerated, and a shift is rounded to whole
levels (half a level rounds to none). When nothing fits, or the SEARCH text holds no
indentation to fit (its lines all at one level where the program's are nested: the author
dropped it), the author's indentation says nothing and a new line is placed by the lines
around it: one level deeper after a line that opens a body (``:`` or an opening bracket), at
the level of the ``if``/``for``/``try`` it continues for ``else``/``elif``/``except``/
``finally`` (looked for up to :data:`ABOVE` program lines above the block), one level
shallower for a closing bracket, else at the level of the line above. That last case is a
guess, whose other plausible reading (the level of the paired line below, when shallower) is
:attr:`Remapped.alternative`; where the fit needed its tolerance, or the fuzzy rule chose the
span, the alternative is the stricter mapping: the REPLACE text moved as a whole by the shift
of its first line. :func:`~evoforge.evolve.edits.apply_edit` tries the alternative when the
child fails its check (a syntax error).

Cost: one :class:`difflib.SequenceMatcher` over the block's stripped lines twice, and, only
when a new level must be made, a scan of at most :data:`_UNIT_SCAN` program lines for its
indentation unit.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from evoforge.evolve.edits import _indent

_CONTINUES = {  # a line starting with the key continues a statement starting with a value
    "else": ("if", "elif", "for", "while", "try", "except"),
    "elif": ("if", "elif"),
    "except": ("try", "except"),
    "finally": ("try", "except", "else"),
}
_CLOSERS = (")", "]", "}")
_MAX_PAIRED = 400  # line pairs compared by similarity in one changed chunk, at most
_UNIT_SCAN = 2_000  # program lines read to learn its indentation unit, at most
ABOVE = 200
"""Program lines above a found span searched for the ``if``/``try`` a new ``else`` continues."""
_AUTHOR_UNITS = (1, 2, 3, 4, 8)  # columns a level an author may indent by


@dataclass(frozen=True)
class Remapped:
    """A REPLACE text mapped onto the program's lines.

    Attributes:
        text: the lines to paste, each ending with a newline.
        alternative: the other plausible mapping (None when the mapping had no guess to make,
            or the other reading gives the same text), tried when ``text`` fails the check.
    """

    text: str
    alternative: str | None = None


def remap(
    search: list[str],
    found: list[str],
    replace: list[str],
    program: Sequence[str],
    *,
    above: Sequence[str] = (),
    tab_width: int = _indent.TAB_WIDTHS[0],
    unsure: bool = False,
) -> Remapped:
    """The REPLACE lines written the way ``found`` (the program's lines) writes ``search``.

    Args:
        search: the SEARCH lines, as the author wrote them.
        found: the program's lines that the SEARCH text was located on.
        replace: the REPLACE lines, as the author wrote them.
        program: all the program's lines (for its indentation style and unit).
        above: the program's lines just above ``found`` (for the statement a new ``else``
            continues).
        tab_width: columns of a tab in the author's and the program's indentation.
        unsure: the span was chosen by similarity (the fuzzy rule): the stricter mapping is
            offered as the alternative.
    """
    mapper = _Mapper(search, found, replace, program, tab_width, above)
    lines = mapper.lines(below=False)
    other: list[str] | None = None
    if mapper.flat:
        other = mapper.lines(below=True)
    elif unsure or mapper.misfit:
        other = uniform(search, found, replace, program, tab_width)
    text = _joined(lines)
    alternative = None if other is None or other == lines else _joined(other)
    return Remapped(text, alternative)


def uniform(
    search: list[str],
    found: list[str],
    replace: list[str],
    program: Sequence[str],
    tab_width: int = _indent.TAB_WIDTHS[0],
) -> list[str] | None:
    """The stricter mapping: the REPLACE lines moved as a whole by the shift between the first
    non-blank SEARCH line and the first non-blank found line (None: a line would go left of
    column 0)."""
    tabs = _indent.uses_tabs(found, program)
    s0 = next((line for line in search if line.strip()), "")
    f0 = next((line for line in found if line.strip()), "")
    delta = _indent.columns(_indent.indent_of(f0), tab_width) - _indent.columns(
        _indent.indent_of(s0), tab_width
    )
    shifted = _indent.shift(replace, delta, tabs, tab_width)
    return None if shifted is None else _indent.line_ending_fix(shifted, found)


def _joined(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def pairs(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Order-preserving pairs ``(i, j)`` of lines of ``a`` and ``b`` that stand for each other.

    Equal lines pair up as :class:`difflib.SequenceMatcher` aligns them; in a changed chunk, lines
    pair in order when both sides have as many, else by similarity (the most similar pairs, in
    order, each at least half similar), so an inserted line does not take the place of the line
    it was inserted next to.
    """
    out: list[tuple[int, int]] = []
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            out.extend(zip(range(i1, i2), range(j1, j2), strict=True))
        elif tag == "replace":
            out.extend(_similar(a, b, i1, i2, j1, j2))
    return out


def _similar(
    a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int
) -> list[tuple[int, int]]:
    """The order-preserving pairing of ``a[i1:i2]`` and ``b[j1:j2]`` of greatest similarity."""
    n, m = i2 - i1, j2 - j1
    if n * m > _MAX_PAIRED:
        return []
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i, j in itertools.product(range(n - 1, -1, -1), range(m - 1, -1, -1)):
        ratio = _similarity(a[i1 + i], b[j1 + j])
        take = score[i + 1][j + 1] + ratio if ratio >= 0.5 else -1.0
        score[i][j] = max(score[i + 1][j], score[i][j + 1], take)
    out, i, j = [], 0, 0
    while i < n and j < m:
        if score[i][j] == score[i + 1][j]:
            i += 1
        elif score[i][j] == score[i][j + 1]:
            j += 1
        else:
            out.append((i1 + i, j1 + j))
            i, j = i + 1, j + 1
    return out


def _similarity(a: str, b: str) -> float:
    """How alike two stripped lines are, a comment added or changed aside."""
    ratio = SequenceMatcher(None, a, b, autojunk=False).ratio()
    code_a, code_b = a.split("  #", 1)[0], b.split("  #", 1)[0]
    if (code_a, code_b) != (a, b) and code_a and code_b:
        ratio = max(ratio, SequenceMatcher(None, code_a, code_b, autojunk=False).ratio())
    return ratio


def _first_word(body: str) -> str:
    for stop in (":", " ", "(", "\t"):
        body = body.split(stop, 1)[0]
    return body


class _Mapper:
    """One block's mapping; see the module docstring for the rules."""

    def __init__(
        self,
        search: list[str],
        found: list[str],
        replace: list[str],
        program: Sequence[str],
        tab_width: int,
        above: Sequence[str] = (),
    ) -> None:
        self.search, self.found, self.replace = search, found, replace
        self.above = above
        self.program, self.tab_width = program, tab_width
        self.eol = "\r" if any(line.endswith("\r") for line in found) else ""
        self.tabs = _indent.uses_tabs(found, program)
        self._unit: int | None = None
        self.indents: dict[int, str] = {}  # the program's indentation strings, by columns
        for line in found:
            if line.strip():
                self.indents.setdefault(self.col(line), _indent.indent_of(line))
        stripped = [line.strip() for line in search]
        to_found = dict(pairs(stripped, [line.strip() for line in found]))
        self.paired: dict[int, tuple[str, str]] = {}  # REPLACE index -> (SEARCH, found) lines
        for i, r in pairs(stripped, [line.strip() for line in replace]):
            if i in to_found:
                self.paired[r] = (search[i], found[to_found[i]])
        anchors = [
            (self.col(search[i]), self.col(found[j]))
            for i, j in to_found.items()
            if search[i].strip() and found[j].strip()
        ]
        self.flat = len({a for a, _ in anchors}) == 1 and len({p for _, p in anchors}) > 1
        # the author indented exactly as the program does (only trailing whitespace differed):
        # lines that are not the program's own keep their indentation as written
        self.identical = bool(anchors) and all(
            _indent.indent_of(search[i]) == _indent.indent_of(found[j])
            for i, j in to_found.items()
            if search[i].strip() and found[j].strip()
        )
        self.scale, self.offset, self.misfit = 1.0, 0.0, False
        self.fitting = anchors[0] if anchors else (0, 0)  # a paired line the fit holds for
        if not self.flat:
            fitted = self._fit(anchors)
            if fitted is None:
                self.flat = True  # the author's indentation cannot be trusted: place by context
            else:
                self.scale, self.offset, self.misfit = fitted
                self.fitting = next(
                    (a, p) for a, p in anchors if round(p - self.scale * a, 3) == self.offset
                )

    def col(self, line: str) -> int:
        return _indent.columns(_indent.indent_of(line), self.tab_width)

    def unit(self) -> int:
        """The program's indentation unit in columns (learnt on first use)."""
        if self._unit is None:
            if self.tabs:
                self._unit = self.tab_width
            else:
                self._unit = (
                    _indent.step_unit(self.found, self.tab_width)
                    or _indent.step_unit(itertools.islice(self.program, _UNIT_SCAN), self.tab_width)
                    or len(_indent.indent_unit(self.found, False, self.tab_width))
                )
        return self._unit

    def _fit(self, anchors: list[tuple[int, int]]) -> tuple[float, float, bool] | None:
        """``(k, c, misfit)`` of the best ``program = k * author + c``; None when none fits."""
        if not anchors:
            return 1.0, 0.0, False
        if len({a for a, _ in anchors}) == 1:  # one level: the author's own steps tell
            step = self._author_step()
            one = step is not None and 2 <= step < self.unit() and self.unit() % step == 0
            scales = [self.unit() / step] if one and step else [1.0]
        else:
            scales = [1.0, *(self.unit() / unit for unit in _AUTHOR_UNITS)]
        best: tuple[int, bool, float, float] | None = None
        for k in scales:
            c, hits = Counter(round(p - k * a, 3) for a, p in anchors).most_common(1)[0]
            if k != 1.0 and c % self.unit():
                continue  # a rescaled author's levels start on one of the program's levels
            if best is None or (hits, k == 1.0) > best[:2]:
                best = (hits, k == 1.0, k, c)
        if best is None:
            return None
        misses = len(anchors) - best[0]
        if misses > (1 if len(anchors) >= 3 else 0):
            return None
        return best[2], best[3], misses > 0

    def _author_step(self) -> int | None:
        cols = sorted({self.col(line) for line in self.search + self.replace if line.strip()})
        steps = [b - a for a, b in itertools.pairwise(cols)]
        return min(steps) if steps else None

    def levels(self, delta: int) -> int:
        """An author's column shift in the program's columns, in whole levels of the program's
        unit: a line off by one space moves nothing. (A new continuation line aligned with a
        bracket may move a little; inside brackets Python ignores indentation.)"""
        if delta == 0:
            return 0
        levels = self.scale * delta / self.unit()
        return int(math.copysign(math.ceil(abs(levels) - 0.5), levels)) * self.unit()

    def indent(self, cols: int) -> str:
        cols = max(cols, 0)
        known = self.indents.get(cols)
        return known if known is not None else _indent.render(cols, self.tabs, self.tab_width)

    def lines(self, *, below: bool) -> list[str]:
        """The mapped REPLACE lines; ``below``: a guessed new line takes the level of the
        paired line below it when that is shallower (the alternative reading)."""
        out: list[str] = []
        cols: list[int | None] = []  # output columns (None: a blank line)
        verbatim: list[bool] = []  # whether the line is the program's own
        own = {n: self._own(self.replace[n], s, f) for n, (s, f) in self.paired.items()}
        for n, line in enumerate(self.replace):
            body = line.strip()
            prev = next((k for k in range(n - 1, -1, -1) if cols[k] is not None), None)
            pair = self.paired.get(n)
            if pair is not None and body == pair[0].strip():
                s, f = pair
                same = not body or self.col(line) == self.col(s)
                moved = (  # after a new line opening a body, with indentation dropped
                    self.flat
                    and prev is not None
                    and not verbatim[prev]
                    and self._opens_above(out, cols, prev, self.col(f))
                )
                if same and not moved:
                    out.append(f)
                    cols.append(self.col(f) if body else None)
                    verbatim.append(True)
                    continue
            if not body:
                out.append(self.eol)
                cols.append(None)
                verbatim.append(False)
                continue
            if self.identical:
                out.append(line.rstrip("\r") + self.eol)
                cols.append(self.col(line))
                verbatim.append(False)
                continue
            if pair is not None:
                col = own[n]
            elif not self.flat:
                col = self._fitted(line)  # the author's level relative to the paired lines
            else:
                col = self._guess(n, line, out, cols, own, below)
            if self.flat and prev is not None and self._opens_above(out, cols, prev, col):
                col = (cols[prev] or 0) + self.unit()  # a body follows a line that opens one
            col = max(col, 0)
            out.append(self.indent(col) + body + self.eol)
            cols.append(col)
            verbatim.append(False)
        return out

    def _opens_above(self, out: list[str], cols: list[int | None], prev: int, col: int) -> bool:
        """Whether line ``prev`` of ``out`` opens a body that a line at ``col`` is not in."""
        return _indent.opens(out[prev]) and col <= (cols[prev] or 0)

    def _own(self, line: str, search: str, found: str) -> int:
        """A paired line's columns: its program line's, moved as the author moved it (by the
        fit when there is one, which one noisy line cannot sway)."""
        delta = self.col(line) - self.col(search)
        if delta == 0 or self.flat:
            return max(self.col(found) + self.levels(delta), 0)
        return self._fitted(line)

    def _fitted(self, line: str) -> int:
        """The fit's columns for ``line``: a paired line that fits, moved by whole levels (an
        author whose only SEARCH line is off by a space shifts nothing)."""
        author, program = self.fitting
        return max(program + self.levels(self.col(line) - author), 0)

    def _guess(
        self,
        n: int,
        line: str,
        out: list[str],
        cols: list[int | None],
        own: dict[int, int],
        below: bool,
    ) -> int:
        """A new line's columns when the author's indentation says nothing (see module doc)."""
        prev = next((k for k in range(n - 1, -1, -1) if cols[k] is not None), None)
        later = [k for k in range(n + 1, len(self.replace)) if k in own and self.replace[k].strip()]
        if prev is None:
            if later:
                return own[later[0]]
            return self.col(next((f for f in self.found if f.strip()), ""))
        prev_col = cols[prev] or 0
        col = prev_col + self.levels(self.col(line) - self.col(self.replace[prev]))
        body = line.strip()
        if _indent.opens(out[prev]):
            return col  # one level deeper: added by the caller
        starts = _CONTINUES.get(_first_word(body))
        if starts is not None:
            above = [(self.col(text), text) for text in self.above if text.strip()]
            above += [
                (c, text) for c, text in zip(cols[: prev + 1], out, strict=True) if c is not None
            ]
            frontier = prev_col
            for kcol, text in reversed(above):
                if kcol < frontier:
                    if _first_word(text.strip()) in starts:
                        return kcol
                    frontier = kcol  # what is deeper than this line is a closed body
        elif body.startswith(_CLOSERS):
            return col - self.unit()
        if below and later and own[later[0]] < col:
            return own[later[0]]
        return col
