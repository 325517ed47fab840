"""Where a SEARCH text applies: the matching rules, strongest first, and the safety rules.

Rules, tried in this order for each block (:data:`MATCH_KINDS`):

``exact``
    The SEARCH text occurs byte for byte, starting at a line start.
``whitespace``
    The lines are equal once trailing whitespace (a CRLF answer's ``\\r`` included) is
    dropped and, when tolerant, leading tabs are expanded (widths 4 and 8): a model writing
    tabs where the program has spaces, or the reverse.
``reindent``
    The lines are equal once stripped and either every line is shifted by the same amount,
    or, when tolerant, the SEARCH text lost all its indentation while the program's lines
    are nested. That case is ``reindent`` too: the text matched line for line and only
    indentation was recovered, which is what ``reindent`` records.
``fuzzy``
    Tolerant only, when no rule above found any place: the one clearly closest span inside a
    region (:mod:`._fuzzy`).

The REPLACE text goes in as written after ``exact``. After a tolerant rule it is mapped line
by line the way the SEARCH text was found (:func:`~._remap.remap`: unchanged lines are the
program's bytes, changed and new ones get the program's indentation); where that mapping
guessed, its other plausible reading rides along for :func:`~._apply.apply_edit` to try when
the child fails its check. ``edit_matching = "exact"`` keeps the REPLACE text as written, or
shifted by the SEARCH text's uniform prefix.

Safety, whatever the rule: a block is applied only at a place wholly inside one EVOLVE-BLOCK
region (a marker line is never part of a match), and only when the first rule that finds
places inside the regions finds exactly one; copies outside the regions do not count. Two
places is an error asking for more context lines, never a guess. A weaker rule is never
tried once a stronger one found a place, even an outside one: a sloppier reading must not
find a different place than a faithful one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal, cast

from evoforge.archive import EDIT_MATCHES
from evoforge.evolve.edits import _indent
from evoforge.evolve.edits._fuzzy import FuzzyBudget, fuzzy_place
from evoforge.evolve.edits._lines import Candidate, ProgramLines
from evoforge.evolve.edits._parse import EditBlock, EditError
from evoforge.evolve.edits._remap import ABOVE, remap
from evoforge.problems import END_MARKER, START_MARKER

MatchKind = Literal["exact", "whitespace", "reindent", "fuzzy"]
MATCH_KINDS = cast("tuple[MatchKind, ...]", EDIT_MATCHES)
"""The rules, strongest first (the archive's ``edit_match`` values); :attr:`AppliedEdit.match`
is the loosest one an edit needed."""

_MAX_POSITIONS = 256  # line-aligned positions a rule examines per block before giving up
_MAX_NAMED = 6  # places named in an ambiguity error

Rule = Callable[[ProgramLines, EditBlock], Iterator[Candidate | None]]
"""Yields candidates; a ``None`` says the rule stopped at :data:`_MAX_POSITIONS`."""


def locate(
    program: ProgramLines,
    block: EditBlock,
    *,
    tolerant: bool,
    fuzzy_threshold: float,
    budget: FuzzyBudget,
) -> tuple[Candidate, MatchKind]:
    """The one place ``block`` applies to in ``program`` and the rule that found it.

    Raises:
        EditError: not found, found only outside the regions, or found in several places.
    """
    rules = _TOLERANT if tolerant else _STRICT
    outside: Candidate | None = None
    for kind, rule in zip(MATCH_KINDS, rules, strict=False):
        inside: list[Candidate] = []
        seen: set[tuple[int, int]] = set()
        truncated = False
        for candidate in rule(program, block):
            if candidate is None:
                truncated = True
                break
            if (candidate.first, candidate.count) in seen:
                continue
            seen.add((candidate.first, candidate.count))
            if program.inside(candidate.first, candidate.count):
                inside.append(candidate)
                if len(inside) > _MAX_NAMED:
                    break
            elif outside is None:
                outside = candidate
        if len(inside) == 1 and not truncated:
            return inside[0].resolved(), kind
        if inside or truncated:
            raise _ambiguous(program, block, inside, truncated)
        if outside is not None:
            raise _outside(program, block, outside)
    if tolerant:
        found = fuzzy_place(program, block, fuzzy_threshold, budget)
        if found is not None:
            return found, "fuzzy"
    first = next((ln.strip() for ln in block.search.split("\n") if ln.strip()), "")
    raise EditError(
        f"block {block.number}: its SEARCH text was not found in the current program "
        f"(first line: {first[:120]!r}); copy the lines exactly, with their indentation, "
        "and apply earlier blocks' changes first"
    )


def _ambiguous(
    program: ProgramLines, block: EditBlock, inside: list[Candidate], truncated: bool
) -> EditError:
    places = ", ".join(program.where(c.first, c.count) for c in inside[:_MAX_NAMED])
    more = " and more" if truncated or len(inside) > _MAX_NAMED else ""
    return EditError(
        f"block {block.number}: its SEARCH text matches several places in the EVOLVE-BLOCK "
        f"regions ({places}{more}); add a few unchanged lines before or after the change to "
        "both SEARCH and REPLACE so that the SEARCH text matches one place only"
    )


def _outside(program: ProgramLines, block: EditBlock, found: Candidate) -> EditError:
    start, end = program.span(found.first, found.count)
    touched = program.text[start:end]
    if START_MARKER in touched or END_MARKER in touched:
        reason = "which include an EVOLVE-BLOCK marker line"
    else:
        reason = f"outside the EVOLVE-BLOCK regions ({program.region_lines()})"
    return EditError(
        f"block {block.number}: its SEARCH text is on {program.where(found.first, found.count)}"
        f", {reason}; only code between the markers may change"
    )


def search_lines(text: str) -> list[str]:
    """A section's lines (sections always end with a newline)."""
    return text.split("\n")[:-1]


def _joined(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


# --- rules ---------------------------------------------------------------------------------


def _exact(program: ProgramLines, block: EditBlock) -> Iterator[Candidate | None]:
    """Byte-for-byte occurrences starting at a line start; the replacement is used verbatim."""
    text, needle = program.text, block.search
    count = needle.count("\n")
    pos = text.find(needle)
    while pos >= 0:
        if pos == 0 or text[pos - 1] == "\n":
            yield Candidate(program.line_of(pos) - 1, count, block.replace)
        pos = text.find(needle, pos + 1)


def _aligned(
    program: ProgramLines,
    block: EditBlock,
    key: object,
    normalise: Callable[[str], str],
    program_normalise: Callable[[str], str] | None = None,
) -> Iterator[tuple[int, list[str], list[str]]]:
    """``(first, search lines, found lines)`` where the normalised lines are equal.

    ``program_normalise`` may stand in for ``normalise`` on the program's lines when it gives
    the same result there faster (``str.rstrip`` when the program has no tab).
    """
    search = search_lines(block.search)
    needle = [normalise(line) for line in search]
    found = program.find(key, program_normalise or normalise, needle)
    for n, first in enumerate(found):
        if n >= _MAX_POSITIONS:
            yield -1, [], []
            return
        yield first, search, program.raw[first : first + len(search)]


def _strict_whitespace(program: ProgramLines, block: EditBlock) -> Iterator[Candidate | None]:
    """Equal but for trailing whitespace; the replacement is used verbatim."""
    for first, search, _found in _aligned(program, block, "rstrip", str.rstrip):
        yield None if first < 0 else Candidate(first, len(search), block.replace)


def _strict_reindent(program: ProgramLines, block: EditBlock) -> Iterator[Candidate | None]:
    """Equal but for one uniform indentation prefix added or removed (character-exact)."""
    replace = search_lines(block.replace)
    for first, search, found in _aligned(program, block, "strip", str.strip):
        if first < 0:
            yield None
            return
        delta = _indent.prefix_delta(search, found)
        shifted = None if delta is None else _indent.prefix_shift(replace, *delta)
        if shifted is not None:
            yield Candidate(first, len(search), _joined(shifted))


def _tab_widths(program: ProgramLines, block: EditBlock) -> tuple[int, ...]:
    """Tab widths worth trying: one is enough when neither side has a tab."""
    has_tab = "\t" in block.search or "\t" in program.text
    return _indent.TAB_WIDTHS if has_tab else _indent.TAB_WIDTHS[:1]


def _whitespace(program: ProgramLines, block: EditBlock) -> Iterator[Candidate | None]:
    """Equal once trailing whitespace is dropped and leading tabs expanded; the REPLACE text is
    mapped onto the found lines (:func:`~._remap.remap`)."""
    replace = search_lines(block.replace)
    tabless = "\t" not in program.text
    for width in _tab_widths(program, block):

        def normalise(line: str, width: int = width) -> str:
            return _indent.normalise(line, width) if "\t" in line else line.rstrip()

        key = "rstrip" if tabless else ("ws", width)
        fast = str.rstrip if tabless else None
        for first, search, found in _aligned(program, block, key, normalise, fast):
            if first < 0:
                yield None
                return
            mapping = _mapping(program, first, search, found, replace, width)
            yield Candidate(first, len(search), "", mapping=mapping)


def _mapping(
    program: ProgramLines,
    first: int,
    search: list[str],
    found: list[str],
    replace: list[str],
    width: int = _indent.TAB_WIDTHS[0],
) -> Callable[[], tuple[str, str | None]]:
    """The deferred :func:`~._remap.remap` of a candidate's REPLACE lines."""

    def mapped() -> tuple[str, str | None]:
        above = program.raw[max(first - ABOVE, 0) : first]
        result = remap(search, found, replace, program.raw, above=above, tab_width=width)
        return result.text, result.alternative

    return mapped


def reindentable(search: list[str], found: list[str]) -> bool:
    """Whether ``found`` equals ``search`` but for indentation the ``reindent`` rule recovers:
    one uniform shift (in characters, or in columns at a tab width) or lost indentation."""
    if _indent.prefix_delta(search, found) is not None:
        return True
    widths = _indent.TAB_WIDTHS if any("\t" in line for line in search + found) else (4,)
    if any(_indent.column_delta(search, found, width) is not None for width in widths):
        return True
    return _indent.lost_indent(search, found)


def _reindent(program: ProgramLines, block: EditBlock) -> Iterator[Candidate | None]:
    """Equal once stripped: a uniform shift (in characters or columns) or lost indentation."""
    replace = search_lines(block.replace)
    for first, search, found in _aligned(program, block, "strip", str.strip):
        if first < 0:
            yield None
            return
        if reindentable(search, found):
            yield Candidate(
                first, len(search), "", mapping=_mapping(program, first, search, found, replace)
            )


_STRICT: tuple[Rule, ...] = (_exact, _strict_whitespace, _strict_reindent)
_TOLERANT: tuple[Rule, ...] = (_exact, _whitespace, _reindent)
