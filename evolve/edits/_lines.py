"""A program's lines with their offsets and its EVOLVE-BLOCK regions, for the matchers.

The matchers work on whole lines; the regions are character offsets. This is the one place
that translates between the two, and the one place that says whether a span of lines may be
edited: only when it lies wholly inside one region (so never on a marker line).
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from evoforge.problems import Block


@dataclass(frozen=True)
class Candidate:
    """A place a SEARCH text could apply: ``count`` lines from line index ``first`` (0-based),
    and the text that would replace them.

    ``alternative`` is another plausible replacement (see :mod:`._remap`). A rule that maps the
    REPLACE text line by line gives ``mapping`` instead, which :meth:`resolved` calls: only for
    the one place a block is applied to, not for every place a rule looks at.
    """

    first: int
    count: int
    replacement: str
    alternative: str | None = None
    mapping: Callable[[], tuple[str, str | None]] | None = field(default=None, compare=False)

    def resolved(self) -> Candidate:
        """This candidate with its replacement (and alternative) computed."""
        if self.mapping is None:
            return self
        text, alternative = self.mapping()
        return Candidate(self.first, self.count, text, alternative)


class ProgramLines:
    """The current program split on ``\\n``, with normalised copies searched in linear time."""

    def __init__(self, text: str, regions: list[Block]) -> None:
        self.text = text
        self.regions = regions
        self.raw = text.split("\n")
        self.starts = _starts(self.raw)
        self._normalised: dict[object, str] = {}

    def span(self, first: int, count: int) -> tuple[int, int]:
        """Offsets of ``count`` whole lines from ``first``, including the final newline."""
        last = first + count - 1
        return self.starts[first], min(self.starts[last] + len(self.raw[last]) + 1, len(self.text))

    def inside(self, first: int, count: int) -> bool:
        """Whether the lines lie wholly inside one region (never on or across a marker line)."""
        start, end = self.span(first, count)
        return any(region.contains(start, end) for region in self.regions)

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset."""
        return bisect.bisect_right(self.starts, offset)

    def editable_runs(self) -> list[tuple[int, int]]:
        """Per region, the line indices ``[first, stop)`` of the lines wholly inside it."""
        runs = []
        for region in self.regions:
            first = bisect.bisect_left(self.starts, region.start)
            # line i ends (newline included) at starts[i + 1]: inside while that is <= end
            stop = bisect.bisect_right(self.starts, region.end) - 1
            if stop > first:
                runs.append((first, stop))
        return runs

    def find(
        self, key: object, normalise: Callable[[str], str], needle: list[str]
    ) -> Iterator[int]:
        """Indices of the lines where ``needle`` (already normalised) matches, in order.

        The program's lines are normalised once per ``key`` and joined, so the search is a
        ``str.find`` loop: linear in the program, whatever the answer holds.
        """
        if key not in self._normalised:
            self._normalised[key] = "\n".join(map(normalise, self.raw))
        joined = self._normalised[key]
        text = "\n".join(needle)
        pos = joined.find(text)
        line, counted = 0, 0
        while pos >= 0:
            end = pos + len(text)
            if (pos == 0 or joined[pos - 1] == "\n") and (
                end == len(joined) or joined[end] == "\n"
            ):
                line += joined.count("\n", counted, pos)
                counted = pos
                yield line
            pos = joined.find(text, pos + 1)

    def where(self, first: int, count: int) -> str:
        """``line 7`` or ``lines 7-9`` (1-based) for a span of lines."""
        return f"line {first + 1}" if count <= 1 else f"lines {first + 1}-{first + count}"

    def region_lines(self) -> str:
        """The regions' content as ``lines 9-14, 20-22`` for error messages."""
        spans = []
        for region in self.regions:
            first = self.line_of(region.start)
            last = max(first, self.line_of(max(region.start, region.end - 1)))
            spans.append(f"{first}-{last}" if last > first else f"{first}")
        return "lines " + ", ".join(spans)


def _starts(lines: list[str]) -> list[int]:
    """Offset of each line in the lines joined with newlines (C-level loops only)."""
    sizes = map(operator.add, map(len, lines[:-1]), itertools.repeat(1))
    return [0, *itertools.accumulate(sizes)]
