"""An edit's blocks tried alone (``[search] split_edits``).

A model's answer often mixes a change that helps with one that hurts: the whole child scores
below its parent, and the call that paid for the good change is lost. The controller then
evaluates each block applied alone to the parent (the parts the proposal made with
:func:`evoforge.evolve.edits.each_block_alone`, as far as they passed the syntax and name
checks) and stores the best program of them all. This module decides when to split, and what
the stored result says: every evaluation spent, and what each part scored.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

from evoforge.archive import EvalResult, Status

if TYPE_CHECKING:
    from evoforge.problems import Problem

SPLIT_AFTER = frozenset({Status.OK, Status.INCORRECT, Status.RUNTIME_ERROR, Status.COMPILE_ERROR})
"""The outcomes of a whole edit after which its blocks are tried alone: one block may be what
hurt or broke it. Not a timeout, a crash or a limit, which cost much or say the candidate is
hostile."""


def fell_short(problem: Problem, result: EvalResult, parent_score: float | None) -> bool:
    """Whether a child scored below its parent, or ran and failed in a way one of its edit's
    blocks may be to blame for (:data:`SPLIT_AFTER`); never for a parent without a score."""
    if parent_score is None or result.status not in SPLIT_AFTER:
        return False
    return result.status is not Status.OK or problem.score(result.objectives) < parent_score


class Split:
    """The whole edit's result, then each part's (:meth:`add`); :meth:`outcome` is the best."""

    def __init__(self, problem: Problem, whole: EvalResult, whole_source: str) -> None:
        self.problem = problem
        self.whole = whole
        self.best, self.best_source = whole, whole_source
        self.spent = whole.evaluations
        self.scores: list[str] = []
        self.requeued = [whole.artifacts["requeued"]] if "requeued" in whole.artifacts else []

    def add(self, part: str, result: EvalResult) -> None:
        """One part's result (``part``: its program)."""
        self.spent += result.evaluations
        self.scores.append(self._score_text(result))
        if "requeued" in result.artifacts:
            self.requeued.append(result.artifacts["requeued"])
        if self._rank(result) > self._rank(self.best):
            self.best, self.best_source = result, part

    def outcome(self) -> tuple[EvalResult, str]:
        """The result to store and its program: the best of the whole and its parts, with
        every evaluation spent on them and a ``split`` artifact saying what each scored (a
        ``requeued`` note of any of them kept: the run records each re-queue)."""
        if not self.scores:
            return self.whole, self.best_source
        kept = (
            "one of its blocks alone was kept"
            if self.best is not self.whole
            else "the whole was kept"
        )
        artifacts = dict(self.best.artifacts)
        artifacts["split"] = (
            f"the edit's blocks together scored {self._score_text(self.whole)}, below the "
            f"parent; alone, {len(self.scores)} of them scored {', '.join(self.scores)}: {kept}"
        )
        if self.requeued:
            artifacts["requeued"] = "; ".join(self.requeued)
        return dataclasses.replace(self.best, evaluations=self.spent, artifacts=artifacts), (
            self.best_source
        )

    def _rank(self, result: EvalResult) -> tuple[bool, float]:
        ok = result.status is Status.OK
        return ok, self.problem.score(result.objectives) if ok else -math.inf

    def _score_text(self, result: EvalResult) -> str:
        if result.status is not Status.OK:
            return str(result.status)
        return f"{self.problem.score(result.objectives):.6g}"
