"""Attempts from a parent that gave nothing to evaluate, told back to the model.

A model that is asked about the same program again tends to make the same kind of change
again: edit a number in a comment, rename a variable, undo the last change, touch the fixed
code. Each such answer costs a call and is rightly not evaluated: an exact copy or a
syntax-tree twin of a stored program (status ``duplicate``; its result is known) or an edit
outside the EVOLVE-BLOCK (``edit_error``; refused). The generic "recent failures" section
shows some of them among the lineage's other failures, with the engine's wording; this one
shows the parent's own, each as one line that says what the attempt amounted to ("it changed
only comments", "it undid the change that made this program", "it reproduced program X,
scored 2.4"), so the next answer changes the logic instead.

Read for every candidate: one query over the parent's most recent children
(:func:`~evoforge.archive.failed_children`, a bounded window of ``idx_programs_parent``)
and cached reads of the programs they duplicate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evoforge.archive import ArchiveError, Status, failed_children

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evoforge.archive import Archive, Program

SCAN = 16
"""The parent's most recent failed children looked at (the shown ones are among them)."""
_ERROR_CHARS = 160  # of a refused edit's error, quoted
_OUTSIDE = re.compile(r"markers may change|EVOLVE-BLOCK marker", re.IGNORECASE)
"""How the edit appliers word a refusal of an edit that touches fixed code (or a marker)."""


NOTHING_NEW_HEADING = "### Your earlier attempts from this program that gave nothing new"
NOTHING_NEW_ADVICE = (
    "Each cost a model call and was not evaluated. Change the logic between the EVOLVE-BLOCK "
    "markers, in a way none of these tried; do not only edit comments, docstrings, names or "
    "formatting."
)


@dataclass(frozen=True)
class NothingNew:
    """One of the parent's attempts that gave nothing to evaluate.

    Attributes:
        program: the stored attempt (status ``duplicate`` or ``edit_error``).
        text: what it amounted to, one line for the prompt (without its ``seq``).
    """

    program: Program
    text: str


def nothing_new(
    archive: Archive, run_id: str, parent: Program, *, limit: int
) -> tuple[NothingNew, ...]:
    """The parent's most recent attempts (at most ``limit``, newest first) that were copies or
    syntax-tree twins of programs of the run, near-duplicates, or edits of fixed code."""
    if limit <= 0:
        return ()
    found = []
    for child in failed_children(archive, run_id, parent.id, limit=SCAN):
        text = describe(archive, run_id, child, parent)
        if text is not None:
            found.append(NothingNew(child, text))
            if len(found) == limit:
                break
    return tuple(found)


def describe(archive: Archive, run_id: str, attempt: Program, parent: Program) -> str | None:
    """What ``attempt`` (a child of ``parent``) amounted to; None when it is not a copy, a
    twin, a near-duplicate or a refused edit of fixed code."""
    artifacts = attempt.artifacts
    if attempt.status is Status.EDIT_ERROR:
        error = artifacts.get("error") or ""
        if not _OUTSIDE.search(error):
            return None
        return (
            f"the edit touched fixed code outside the EVOLVE-BLOCK and was refused ({_clip(error)})"
        )
    if attempt.status is not Status.DUPLICATE:
        return None
    rule, twin = artifacts.get("rule", ""), artifacts.get("duplicate_of", "")
    if rule == "near":
        similarity = artifacts.get("similarity", "")
        share = f"{float(similarity):.0%} " if _is_number(similarity) else ""
        return (
            f"the result was {share}the same as elite {twin} of the island: too small a step "
            "to be worth an evaluation"
        )
    if twin.startswith("in-flight:"):
        return (
            "the result had the same logic as a program being evaluated at the time (only "
            "comments, formatting or names differed)"
        )
    if twin == parent.id:
        if rule == "exact":
            return "the edit changed nothing: the result was the current program itself"
        return (
            "the edit changed only comments, docstrings, formatting or names: the logic was "
            "the current program's"
        )
    what = _program(archive, run_id, twin, parent)
    if rule == "exact":
        return f"the result was an exact copy of {what}: that change was already tried"
    return (
        f"the result had the same logic as {what} (only comments, docstrings, formatting or "
        "names differed): that change was already tried"
    )


def nothing_new_section(attempts: Sequence[NothingNew]) -> str:
    """The prompt's subsection of the current program listing ``attempts``, one line each."""
    lines = [NOTHING_NEW_HEADING, NOTHING_NEW_ADVICE]
    lines += [f"- seq {a.program.seq} ({a.program.edit_kind}): {a.text}" for a in attempts]
    return "\n".join(lines)


def _program(archive: Archive, run_id: str, program_id: str, parent: Program) -> str:
    """``program X, scored S`` (or ``…, which failed: status``); the parent's parent is named
    as such: reproducing it undid the change that made the current program."""
    name = f"program {program_id}"
    if program_id and program_id == parent.parent_id:
        name = f"the current program's parent {program_id} (the edit undid the change that made it)"
    try:
        twin = archive.get_program(run_id, program_id)
    except ArchiveError:
        return name
    if twin.score is not None:
        return f"{name}, which scored {twin.score:.6g}"
    if twin.status is not Status.OK:
        return f"{name}, which failed ({twin.status})"
    return name


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _ERROR_CHARS else text[: _ERROR_CHARS - 1] + "…"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
