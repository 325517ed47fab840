"""Apply a model's answer to the parent program: a diff block by block, or a rewrite.

An answer is either a *diff* (one or more SEARCH/REPLACE blocks in the aider/AlphaEvolve
format, or what models write for them: unified-diff hunks, fences labelled "search" and
"replace") or a *rewrite* (no block, but a fenced code block holding the new program; in
Python, the code it elides with ``# ... unchanged ...`` is the parent's, :mod:`._elided`).
A crossover is not a third format: it is a diff or a rewrite whose content came from another
program.

Only text inside EVOLVE-BLOCK regions may change; everything here enforces it and explains
every refusal in an :class:`EditError` that a model (or a person) can act on.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, replace as replace_fields
from typing import Literal

from evoforge.base.reasoning import CutOffReasoning, without_reasoning
from evoforge.evolve.checks import bindings
from evoforge.evolve.edits._elided import fill_elisions
from evoforge.evolve.edits._file_rewrites import file_rewrites
from evoforge.evolve.edits._files import FileScope
from evoforge.evolve.edits._fuzzy import FuzzyBudget
from evoforge.evolve.edits._indent import indent_of
from evoforge.evolve.edits._labelled import labelled_blocks
from evoforge.evolve.edits._lines import ProgramLines
from evoforge.evolve.edits._match import MATCH_KINDS, MatchKind, locate, search_lines
from evoforge.evolve.edits._parse import (
    EditBlock,
    EditError,
    fenced_blocks,
    parse_blocks,
    rewrite_code,
)
from evoforge.evolve.edits._unified import unified_blocks
from evoforge.evolve.edits._unmarked import unmarked_content
from evoforge.problems import END_MARKER, START_MARKER, Block, BlockError, find_blocks


@dataclass(frozen=True)
class AppliedEdit:
    """The child program produced from an answer.

    Attributes:
        source: the child's full source.
        kind: ``"diff"`` for SEARCH/REPLACE blocks, ``"rewrite"`` for a whole program.
        n_blocks: number of SEARCH/REPLACE blocks applied (0 for a rewrite).
        match: the loosest matching rule any block needed (``"exact"`` < ``"whitespace"`` <
            ``"reindent"`` < ``"fuzzy"``, see :mod:`evoforge.evolve.edits`); None for a
            rewrite. Stored as ``programs.edit_match`` so a run shows how sloppy its model is.
        problem: what the ``check`` given to :func:`apply_edit` said of ``source`` (None: it
            passed, or no check was given), so the caller need not run it again.
    """

    source: str
    kind: Literal["diff", "rewrite"]
    n_blocks: int
    match: MatchKind | None = None
    problem: str | None = None


def apply_edit(
    parent: str,
    answer: str,
    *,
    tolerant: bool = True,
    fuzzy_threshold: float = 0.9,
    check: Callable[[str], str | None] | None = None,
    language: str = "python",
) -> AppliedEdit:
    """Apply a model's ``answer`` to ``parent`` and return the child.

    A diff is applied block by block to the evolving text (a block sees the earlier blocks'
    changes). Each block goes where the strongest matching rule that finds it puts it, and only
    there: a SEARCH text found in two places inside the EVOLVE-BLOCK regions is refused, not
    guessed (see :mod:`evoforge.evolve.edits._match` for the rules). A unified diff (``@@``
    hunks) is read as the SEARCH/REPLACE blocks it means (:mod:`._unified`). A rewrite keeps
    the parent's frozen parts byte for byte. Thinking that opens the answer (``<think>``) is
    not read (:mod:`evoforge.base.reasoning`).

    Args:
        parent: the parent program, with its EVOLVE-BLOCK markers.
        answer: the model's whole answer (prose, fences and blocks).
        tolerant: also accept tab/space mix-ups, lost indentation and a close unique span
            (``[search] edit_matching = "tolerant"``); False keeps the exact, trailing-
            whitespace and uniform-indentation rules only (``"exact"``).
        fuzzy_threshold: least similarity of a SEARCH text to the span it is applied to when
            only the fuzzy rule finds it.
        check: what is wrong with a child (the syntax check), None when nothing is. A diff
            whose child fails it, and one of whose blocks had its REPLACE text mapped by a
            guess (lost indentation, a fuzzy span: see :mod:`._remap`), is applied once more
            with the other plausible mapping of every such block; that child is kept if it
            passes. Either way :attr:`AppliedEdit.problem` holds the check's answer.
        language: the program's language: a rewrite's fence must hold code in it (see
            :func:`~evoforge.evolve.edits._parse.rewrite_code`).

    Raises:
        EditError: the answer is unusable; the message names the block and the reason.
        BlockError: ``parent`` itself has no valid EVOLVE-BLOCK regions (a problem-spec bug,
            not a model mistake).
        ValueError: ``fuzzy_threshold`` is not in (0, 1].
    """
    if not 0 < fuzzy_threshold <= 1:
        raise ValueError(f"fuzzy_threshold must be in (0, 1], got {fuzzy_threshold!r}")
    regions = find_blocks(parent, origin="parent program")
    lines = _answer_lines(answer)
    blocks, labelled = _diff_blocks(lines, language)
    match: MatchKind | None = None
    guessed = False
    kind: Literal["diff", "rewrite"] = "rewrite"
    if not blocks:
        source = _rewrite(parent, regions, lines, language)
    else:
        try:
            source, match, guessed = _apply_diff(parent, blocks, tolerant, fuzzy_threshold)
            kind = "diff"
        except EditError as diff_error:
            # One pair labelled "original code" / "updated code" may be two whole programs,
            # the first misquoted: then its last fence is the rewrite it means.
            alone = labelled and len(blocks) == 1
            source = _rewrite_instead(parent, regions, lines, language, check) if alone else ""
            if not source:
                raise diff_error from None
            blocks, kind = [], "rewrite"
    if source == parent:
        raise EditError(
            "the edit changes nothing: the result is identical to the current program; "
            "propose a change to the code between the EVOLVE-BLOCK markers"
        )
    problem = None if check is None else check(source)
    if problem is not None and guessed:
        other, _, _ = _apply_diff(parent, blocks, tolerant, fuzzy_threshold, alternatives=True)
        if other != parent and check is not None and check(other) is None:
            source, problem = other, None
    return AppliedEdit(source=source, kind=kind, n_blocks=len(blocks), match=match, problem=problem)


def each_block_alone(
    parent: str,
    answer: str,
    *,
    tolerant: bool = True,
    fuzzy_threshold: float = 0.9,
    language: str = "python",
) -> list[str]:
    """The children that each SEARCH/REPLACE block of a diff ``answer`` makes on its own,
    applied to ``parent`` by :func:`apply_edit`'s rules, in the answer's order; distinct, none
    equal to ``parent``. A block that does not apply alone (its SEARCH text was written by an
    earlier block) is left out, and so is every block of an answer with fewer than two.

    A model's answer often mixes a change that helps with one that hurts; this is what the run
    evaluates, when the whole edit scored below its parent, to keep the one that helped
    (``[search] split_edits``).
    """
    try:
        lines = _answer_lines(answer)
        blocks, _ = _diff_blocks(lines, language)
    except EditError:
        return []
    if len(blocks) < 2:
        return []
    children: list[str] = []
    for block in blocks:
        try:
            child, _, _ = _apply_diff(parent, [block], tolerant, fuzzy_threshold)
        except (EditError, BlockError):
            continue
        if child != parent and child not in children:
            children.append(child)
    return children


def _answer_lines(answer: str) -> list[str]:
    """The answer's lines, its opening thinking left out."""
    try:
        return without_reasoning(answer).split("\n")
    except CutOffReasoning as exc:
        raise EditError(str(exc)) from None


# --- diffs ---------------------------------------------------------------------------------


def _diff_blocks(lines: list[str], language: str) -> tuple[list[EditBlock], bool]:
    """The SEARCH/REPLACE blocks an answer means, marked, as unified-diff hunks or as labelled
    fence pairs (:mod:`._labelled`), and whether they are the pairs. In Python, what a REPLACE
    text elides of its SEARCH text's statements is filled from it (:mod:`._elided`)."""
    blocks = parse_blocks(lines) or unified_blocks(lines)
    labelled = not blocks
    if labelled:
        blocks = labelled_blocks(lines, fenced_blocks(lines))
    if language == "python":
        blocks = [replace_fields(b, replace=fill_elisions(b.search, b.replace)) for b in blocks]
    return blocks, labelled and bool(blocks)


def _apply_diff(
    parent: str,
    blocks: list[EditBlock],
    tolerant: bool,
    fuzzy_threshold: float,
    *,
    alternatives: bool = False,
) -> tuple[str, MatchKind, bool]:
    """The child, the loosest rule its blocks needed, and whether a block's REPLACE mapping had
    an alternative (used instead of the preferred mapping when ``alternatives``)."""
    text = parent
    guessed = False
    regions = find_blocks(parent, origin="parent program")
    loosest = 0
    budget = FuzzyBudget()
    scope = FileScope.of(parent)
    for block in map(_without_marker_context, blocks):
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
        program = ProgramLines(text, scope.regions(block, text, regions))
        try:
            found, kind = locate(
                program, block, tolerant=tolerant, fuzzy_threshold=fuzzy_threshold, budget=budget
            )
        except EditError as exc:
            if scope.current is None:
                raise
            raise EditError(f"{exc} (the block is headed by the file {scope.current})") from None
        start, end = program.span(found.first, found.count)
        replacement = found.replacement
        if found.alternative is not None:
            guessed = True
            replacement = found.alternative if alternatives else replacement
        text = text[:start] + replacement + text[end:]
        regions = _moved(regions, start, end, len(replacement))
        loosest = max(loosest, MATCH_KINDS.index(kind))
    return text, MATCH_KINDS[loosest], guessed


def _without_marker_context(block: EditBlock) -> EditBlock:
    """``block`` without the unchanged lines at its edges from an EVOLVE-BLOCK marker outward.

    Models copy the marker line as context (the START line above a change near the top, the
    END line below one near the bottom, three lines of ``diff -u`` context reaching it). A
    block may only change code inside a region, and a line kept in both texts says nothing
    about the change, so those lines are not needed to locate it; a marker line that the
    block changes, moves or drops is still refused.
    """
    search, replace = block.search.splitlines(True), block.replace.splitlines(True)
    common = 0
    while common < min(len(search), len(replace)) and search[common] == replace[common]:
        common += 1
    head = max((k + 1 for k in range(common) if _is_marker(search[k])), default=0)
    tail = 0
    while (
        tail < min(len(search), len(replace)) - head
        and search[len(search) - 1 - tail] == replace[len(replace) - 1 - tail]
    ):
        tail += 1
    cut = max((k + 1 for k in range(tail) if _is_marker(search[len(search) - 1 - k])), default=0)
    if not head and not cut:
        return block
    search = search[head : len(search) - cut]
    replace = replace[head : len(replace) - cut]
    return replace_fields(block, search="".join(search), replace="".join(replace))


def _is_marker(line: str) -> bool:
    return START_MARKER in line or END_MARKER in line


def _moved(regions: list[Block], start: int, end: int, size: int) -> list[Block]:
    """The regions once ``[start, end)``, inside one of them, became ``size`` characters.

    The REPLACE text holds no marker, so the regions are those of the text before, the one
    edited grown or shrunk and the later ones shifted: no need to scan the program again.
    """
    delta = size - (end - start)
    return [
        region
        if region.end < start
        else Block(region.start + (delta if region.start > start else 0), region.end + delta)
        for region in regions
    ]


# --- rewrites ------------------------------------------------------------------------------


def _rewrite_instead(
    parent: str,
    regions: list[Block],
    lines: list[str],
    language: str,
    check: Callable[[str], str | None] | None,
) -> str:
    """The answer read as a rewrite, for a labelled pair that does not apply as a block; ""
    unless that child is a Python program that still defines every module-level name of
    ``parent`` and passes ``check``. A pair's REPLACE fence read as the whole region would
    otherwise drop what the pair's author left alone."""
    if language != "python":
        return ""
    try:
        source = _rewrite(parent, regions, lines, language)
        if not bindings(ast.parse(parent).body) <= bindings(ast.parse(source).body):
            return ""
    except (EditError, SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    return source if check is None or check(source) is None else ""


def _rewrite(parent: str, regions: list[Block], lines: list[str], language: str) -> str:
    """The child of a rewrite answer: whole files of a repository bundle, or its code fence."""
    rewrites = file_rewrites(parent, lines)
    if not rewrites:
        return _apply_code(parent, regions, rewrite_code(lines, language), language)
    source = parent
    for start, end, code in rewrites:  # last file first: earlier offsets stay valid
        section = source[start:end]
        section_regions = find_blocks(section, origin="parent program")
        source = source[:start] + _apply_code(section, section_regions, code) + source[end:]
    return source


def _apply_code(parent: str, regions: list[Block], code: str, language: str | None = None) -> str:
    if not code.strip():
        raise EditError("the rewrite's code block is empty; put the whole new program in it")
    python = language == "python"
    if START_MARKER in code or END_MARKER in code:
        return _splice_marked(parent, regions, code, fill=python)
    if len(regions) != 1:
        raise EditError(
            f"the rewrite has no EVOLVE-BLOCK markers but the current program has "
            f"{len(regions)} regions; rewrite the whole program, keeping every marker line and "
            "the code outside the regions unchanged"
        )
    region = regions[0]
    if python:
        code = unmarked_content(
            parent, region, fill_elisions(parent[region.start : region.end], code)
        )
    return (
        parent[: region.start]
        + _fit_indent(parent[region.start : region.end], code)
        + (parent[region.end :])
    )


def _fit_indent(old: str, new: str) -> str:
    """Indent ``new`` like ``old`` when the region sits in an indented body and new is flush."""

    def common(text: str) -> str | None:
        indents = [indent_of(line) for line in text.split("\n") if line.strip()]
        return min(indents, key=len) if indents else None

    old_indent, new_indent = common(old), common(new)
    if old_indent and new_indent == "":
        new = "".join(
            (old_indent + line if line.strip() else line) + "\n" for line in search_lines(new)
        )
    return new


def _splice_marked(parent: str, regions: list[Block], code: str, *, fill: bool = False) -> str:
    """Take the rewrite's region contents; its frozen parts must match the parent's. With
    ``fill`` (Python), code a region's content elides is filled from the parent's region."""
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
        content = code[new.start : new.end]
        pieces.append(fill_elisions(parent[old.start : old.end], content) if fill else content)
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
