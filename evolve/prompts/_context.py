"""What a prompt is built from: the parent, a second parent, the run's best, recent failures,
the parent's attempts that gave nothing new.

:func:`gather_context` reads it from the archive for one candidate. It runs for every candidate, so
it reads a bounded number of rows through indexes (see :mod:`evoforge.archive._feedback`) and
programs through the archive's cache: well under a millisecond on a 100k-program archive.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evoforge.archive import ArchiveError, Status, failed_children
from evoforge.evolve.prompts._editable import editable_note
from evoforge.evolve.prompts._modes import Mode
from evoforge.evolve.prompts._nothing_new import NothingNew, nothing_new

if TYPE_CHECKING:
    import numpy as np

    from evoforge.archive import Archive, Program
    from evoforge.evolve.prompts._config import PromptConfig
    from evoforge.evolve.prompts._memory import OptimizationMemory
    from evoforge.islands import Selection
    from evoforge.problems import Problem

LINEAGE_DEPTH = 3
"""Programs of the lineage (the parent and its closest ancestors) whose failed children are
shown."""
DIFF_CHARS = 1200
"""Longest diff shown for one failure (whole lines, cut at the end)."""
_CONTEXT = 2  # lines of context around each change in a diff


@dataclass(frozen=True)
class FailedAttempt:
    """A failed attempt of the parent's lineage and the change it tried.

    Attributes:
        program: the stored attempt (its status and ``error`` artifact say what went wrong;
            ``source`` is None for an answer that could not be applied).
        diff: unified diff of its source against its parent's, cut to :data:`DIFF_CHARS`;
            ``""`` when it has no source or its parent is not in the shown lineage.
    """

    program: Program
    diff: str = ""


@dataclass(frozen=True)
class Foreign:
    """An elite of another task of the suite, offered as an inspiration (cross-task transfer).

    Attributes:
        task: that task's problem name (the prompt names it).
        run_id: that task's run.
        program: the elite; its score is on that task's scale, not this one's.
    """

    task: str
    run_id: str
    program: Program

    @property
    def ref(self) -> str:
        """``run id/program id``: how a child records it (``Program.transfer_from``)."""
        return f"{self.run_id}/{self.program.id}"

    @property
    def note(self) -> str:
        """What the prompt says above it."""
        return (
            f"A program of the related task {self.task}, not of this problem: its score and "
            "metrics are that task's and cannot be compared with this one's. Borrow its ideas, "
            "not what only fits that task."
        )


@dataclass(frozen=True)
class PromptContext:
    """Everything one candidate's prompt shows besides the problem.

    Attributes:
        mode: what the prompt asks for.
        parent: the program to change (in ``repair`` mode, the failed program to fix).
        second_parent: the program to combine with in ``crossover`` mode, else None.
        inspirations: other elites to draw ideas from (the second parent is not repeated).
        top_programs: the run's best ok programs, best first, the parent excluded.
        lineage_failures: recent failed attempts of the parent's lineage, newest first.
        memory_digest: the run's :class:`~evoforge.evolve.OptimizationMemory` digest (may be empty).
        parent_diff: in ``repair`` mode, the change that turned the failed program's parent
            into it (where the error most likely is); else ``""``.
        nothing_new: the parent's recent attempts that gave nothing to evaluate (copies,
            twins, edits of fixed code), newest first; they are not repeated among
            ``lineage_failures``.
        editable_note: which lines of the parent may change and that the rest is read-only
            (:func:`~evoforge.evolve.prompts.editable_note`), shown above it; ``""``: none.
        foreign: elites of other tasks of the suite, shown after the inspirations and
            labelled as another task's (cross-task transfer); left out first when the prompt
            is too large.
    """

    mode: Mode
    parent: Program
    second_parent: Program | None = None
    inspirations: tuple[Program, ...] = ()
    top_programs: tuple[Program, ...] = ()
    lineage_failures: tuple[FailedAttempt, ...] = ()
    memory_digest: str = ""
    parent_diff: str = ""
    nothing_new: tuple[NothingNew, ...] = ()
    editable_note: str = ""
    foreign: tuple[Foreign, ...] = ()

    def __post_init__(self) -> None:
        if self.mode is Mode.CROSSOVER and self.second_parent is None:
            raise ValueError(
                "a crossover context needs a second_parent; use mode diff when there is none"
            )


def gather_context(
    archive: Archive,
    run_id: str,
    problem: Problem,
    selection: Selection,
    mode: Mode,
    config: PromptConfig,
    rng: np.random.Generator,
    *,
    parent: Program | None = None,
    memory: OptimizationMemory | None = None,
    evaluations: int = 0,
    nothing_new_shown: int = 0,
    mark_fixed_code: bool = False,
) -> PromptContext:
    """Read one candidate's prompt context from the archive.

    Args:
        archive, run_id: where the run lives.
        problem: the run's problem (for the memory digest).
        selection: the island's selection (parent and inspirations).
        mode: the chosen mode. ``crossover`` without any possible second parent (a run
            with one elite) becomes ``diff``: read the mode back from the context.
        config: how many top programs and failures to show.
        rng: the candidate's generator (drawn from only to pick a crossover partner).
        parent: the parent to use instead of ``selection.parent``; required in ``repair``
            mode, where it is the failure from :func:`~evoforge.evolve.pick_repair`.
        memory: the run's memory; its digest is included when given (repair prompts leave
            it out: a fix is not an optimisation).
        evaluations: evaluations spent so far (when the memory refreshes).
        nothing_new_shown: the parent's attempts that gave nothing new shown at most (see
            :mod:`~evoforge.evolve.prompts._nothing_new`); 0: none (they may then appear
            among the lineage failures).
        mark_fixed_code: say above the parent which of its lines may change
            (``[search] mark_fixed_code``).

    Raises:
        ValueError: ``repair`` mode without a ``parent``.
    """
    if mode is Mode.REPAIR and parent is None:
        raise ValueError(
            "repair mode needs the failed program as parent: pass parent=pick_repair(...)"
        )
    parent = selection.parent if parent is None else parent
    lineage = _lineage(archive, run_id, parent)
    wasted = nothing_new(archive, run_id, parent, limit=nothing_new_shown)
    note = editable_note(parent.source or "") if mark_fixed_code else ""
    failures = _lineage_failures(
        archive, run_id, parent, lineage, config.lineage_failures, {w.program.id for w in wasted}
    )
    if mode is Mode.REPAIR:
        before = lineage.get(parent.parent_id or "")
        diff = short_diff(before.source or "", parent.source or "") if before else ""
        return PromptContext(
            mode,
            parent,
            lineage_failures=failures,
            parent_diff=diff,
            nothing_new=wasted,
            editable_note=note,
        )
    second = None
    if mode is Mode.CROSSOVER:
        second = _partner(archive, run_id, parent, selection.inspirations, rng)
        mode = Mode.CROSSOVER if second is not None else Mode.DIFF
    shown = {parent.id} | ({second.id} if second is not None else set())
    top = [p for p in archive.top(run_id, config.top_programs + 1) if p.id != parent.id]
    return PromptContext(
        mode=mode,
        parent=parent,
        second_parent=second,
        inspirations=tuple(p for p in selection.inspirations if p.id not in shown),
        top_programs=tuple(top[: config.top_programs]),
        lineage_failures=failures,
        memory_digest=memory.digest(archive, run_id, problem, evaluations) if memory else "",
        nothing_new=wasted,
        editable_note=note,
    )


def _lineage(archive: Archive, run_id: str, program: Program) -> dict[str, Program]:
    """The program and up to ``LINEAGE_DEPTH - 1`` ancestors, by id (cached reads)."""
    chain = {program.id: program}
    while len(chain) < LINEAGE_DEPTH and program.parent_id and program.parent_id not in chain:
        try:
            program = archive.get_program(run_id, program.parent_id)
        except ArchiveError:  # a parent from another archive (imported program): stop here
            break
        chain[program.id] = program
    return chain


def _lineage_failures(
    archive: Archive,
    run_id: str,
    parent: Program,
    lineage: dict[str, Program],
    limit: int,
    shown: Collection[str] = (),
) -> tuple[FailedAttempt, ...]:
    """Recent failed attempts of the lineage, newest first, but those in ``shown``."""
    if limit <= 0:
        return ()
    found: dict[str, Program] = {}
    for program in lineage.values():
        if program.id != parent.id and program.status is not Status.OK:
            found[program.id] = program  # a failed ancestor: a repair chain
        for child in failed_children(archive, run_id, program.id, limit=limit + len(shown)):
            found.setdefault(child.id, child)
    found.pop(parent.id, None)  # in repair mode the parent is one of its parent's failures
    for program_id in shown:
        found.pop(program_id, None)
    recent = sorted(found.values(), key=lambda p: -p.seq)[:limit]
    out = []
    for failure in recent:
        before = lineage.get(failure.parent_id or "")
        diff = ""
        if failure.source is not None and before is not None and before.source is not None:
            diff = short_diff(before.source, failure.source)
        out.append(FailedAttempt(failure, diff))
    return tuple(out)


def _partner(
    archive: Archive,
    run_id: str,
    parent: Program,
    inspirations: tuple[Program, ...],
    rng: np.random.Generator,
) -> Program | None:
    """A second parent: an inspiration from another island or cell if possible, else any
    other elite of the run's grid."""
    others = [p for p in inspirations if p.id != parent.id]
    if others:
        rank = [(p.island != parent.island) + (p.cell != parent.cell) for p in others]
        best = [p for p, r in zip(others, rank, strict=True) if r == max(rank)]
        return best[int(rng.integers(len(best)))]
    elites = [e for e in archive.elites(run_id, -1) if e.program_id != parent.id]
    if not elites:
        return None
    apart = [e for e in elites if e.cell != parent.cell] or elites
    return archive.get_program(run_id, apart[int(rng.integers(len(apart)))].program_id)


def short_diff(before: str, after: str, max_chars: int = DIFF_CHARS) -> str:
    """Hunks of the unified diff (no file header, 2 lines of context), cut at a line to
    ``max_chars``.

    The common first and last lines are set aside before matching: a child differs from its
    parent in a few places, so difflib only sees the changed middle and this stays cheap
    (it runs for several failures per candidate).
    """
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    shortest = min(len(a), len(b))
    head = 0
    while head < shortest and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shortest - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    lo = max(0, head - _CONTEXT)
    cut = max(0, tail - _CONTEXT)
    a_mid, b_mid = a[lo : len(a) - cut], b[lo : len(b) - cut]
    marker = "… (diff cut)\n"
    out: list[str] = []
    used = len(marker)
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False)
    for group in matcher.get_grouped_opcodes(_CONTEXT):
        lines = [_hunk_header(group, lo)]
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in a_mid[i1:i2]]
                continue
            lines += ["-" + line for line in a_mid[i1:i2]]
            lines += ["+" + line for line in b_mid[j1:j2]]
        for line in lines:
            line = line if line.endswith("\n") else line + "\n"
            if used + len(line) > max_chars:
                return "".join(out) + marker
            out.append(line)
            used += len(line)
    return "".join(out)


def _hunk_header(group: list[tuple[str, int, int, int, int]], offset: int) -> str:
    """``@@ -start,count +start,count @@`` as difflib writes it, lines shifted by ``offset``."""

    def span(first: int, last: int) -> str:
        start, length = first + offset + 1, last - first
        if length == 1:
            return f"{start}"
        return f"{start - 1 if length == 0 else start},{length}"

    return f"@@ -{span(group[0][1], group[-1][2])} +{span(group[0][3], group[-1][4])} @@\n"
