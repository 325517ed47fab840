"""More from one model answer, without another call: its blocks tried alone when the whole
edit fell short (``[search] split_edits``, :mod:`._split`), and its edit applied to the run's
best program when it improved its own parent (``[search] carry_to_best``).

Both spend evaluations of the budget, taken as a tuning trial is, to save model calls: what a
user pays for. :class:`AnswerReuse` is mixed into :class:`~evoforge.evolve.Controller`; like
:class:`~evoforge.evolve.run._recorder.Recorder` it holds no state of its own.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from evoforge.archive import EvalResult, Program, Status, improved, program_id
from evoforge.evaluators.tuning import TRIAL_BUDGET, TrialBudget
from evoforge.evolve.edits import EditError
from evoforge.evolve.proposals import apply_checked
from evoforge.evolve.run._recorder import Recorder
from evoforge.evolve.run._split import Split
from evoforge.islands import Fingerprint, fingerprint

if TYPE_CHECKING:
    import asyncio

    from evoforge.evolve.proposals import ProposalSetup
    from evoforge.problems import Problem


def carries(problem: Problem, result: EvalResult, parent: Program, kind: str) -> bool:
    """Whether the answer whose child (or its tuned version) gave ``result``, a candidate of
    ``parent``, is worth applying to the run's best: a diff (a rewrite would replace the
    best's code with the child's) that improved its parent as a whole (not one of its blocks
    alone)."""
    return (
        kind == "diff"
        and result.status is Status.OK
        and "split" not in result.artifacts
        and parent.score is not None  # not a repair of a failed program
        and improved(problem.score(result.objectives), parent.score)
    )


def carry_note(child: Program, parent: Program, best: Program) -> str:
    """What a carried program is, for its ``carried`` artifact."""
    return (
        f"the edit of program {child.id} (seq {child.seq}), which took its parent {parent.id} "
        f"from {parent.score:.6g} to {child.score:.6g}, applied to the run's best program "
        f"{best.id} (score {best.score:.6g})"
    )


class AnswerReuse(Recorder):
    """The controller's second uses of an answer (see the module docstring)."""

    _in_flight: set[str]
    _next_seq: int
    _reserved: int
    _tune_changed: int
    _setup: ProposalSetup

    if TYPE_CHECKING:  # the controller's

        async def _evaluate(
            self, seq: int, child_id: str, source: str, eval_slots: asyncio.Semaphore
        ) -> EvalResult: ...

        def _take_trial(self) -> bool: ...

        def _scored_source(self, applied: str, result: EvalResult) -> str: ...

    def _is_new(self, source: str, fp: Fingerprint | None = None) -> bool:
        """Whether neither ``source`` nor an equivalent is in the run or being evaluated
        (``fp``: its fingerprint, when made already)."""
        pid = program_id(source)
        return not (
            pid in self._in_flight
            or self.archive.has_program(self.run.id, pid)
            or self.search.has_twin(fp or fingerprint(source, self.problem.language))
        )

    async def _split(
        self,
        seq: int,
        parts: tuple[str, ...],
        whole: EvalResult,
        whole_source: str,
        trials: TrialBudget,
        eval_slots: asyncio.Semaphore,
        held: set[str],
    ) -> tuple[EvalResult, str]:
        """Evaluate each block of an edit that fell short alone (:mod:`._split`): the best
        result and its program. A part the run has is skipped; each evaluation is taken from
        the budget as a tuning trial is. A part stays in flight (its id in ``held``) until the
        caller has stored the outcome, so no other candidate evaluates or stores it meanwhile."""
        split = Split(self.problem, whole, whole_source)
        for part in parts:
            if not self._is_new(part):
                continue
            if not trials.take():
                break
            part_id = program_id(part)
            self._in_flight.add(part_id)
            held.add(part_id)
            split.add(part, await self._evaluate(seq, part_id, part, eval_slots))
            self.archive.forget_evaluation(self.run.id, part_id)  # stored, if at all, later
        return split.outcome()

    async def _carry(
        self, child: Program, parent: Program, answer: str, eval_slots: asyncio.Semaphore
    ) -> None:
        """Apply ``answer``, which made ``child`` an improvement on ``parent``, to the run's
        best program too, and evaluate and store that program as a candidate of its own (edit
        kind ``carry``, the best as its parent, ``child`` as its inspiration).

        An edit that helped one program often helps another that holds the same code, and the
        best is where a gain counts. Early in a run, when islands climb apart from one seed,
        this is most of the improvements: on OpenEvolve's circle_packing folder, 12 of the 39
        improving children of the first 120 model calls of two runs made the run's best better
        still when their edit was applied to it. Nothing happens when the best is ``parent`` or
        ``child`` itself, when the edit does not apply to it or its result fails the checks, or
        is already in the run.

        The caller has reserved the evaluation (:meth:`_take_trial`) before storing ``child``,
        while the budget still counted ``child``'s evaluations as reserved only once; it is
        released here, used or not.
        """
        taken, carried_id = 0, ""
        try:
            best_id = self.snapshot.best_program_id
            # (a child whose result could not be stored has no score: nothing helped)
            if best_id is None or best_id in (parent.id, child.id) or child.score is None:
                return
            best = self.archive.get_program(self.run.id, best_id)
            try:
                applied = apply_checked(self._setup, best, answer)
            except EditError:
                return
            if applied.problem is not None:
                return
            fp = fingerprint(applied.source, self.problem.language)
            if not self._is_new(applied.source, fp):
                return
            seq, self._next_seq = self._next_seq, self._next_seq + 1
            carried_id = program_id(applied.source)
            self._in_flight.add(carried_id)
            # tuned as any child is: what the edit changed, read on the best
            trials = TrialBudget(self._take_trial, best.score, best.source, self._tune_changed)
            token = TRIAL_BUDGET.set(trials)
            try:
                result = await self._evaluate(seq, carried_id, applied.source, eval_slots)
            finally:
                TRIAL_BUDGET.reset(token)
                taken = trials.taken
            result.artifacts["carried"] = carry_note(child, parent, best)
            self._store(
                lambda source, result: self._program(
                    seq=seq,
                    source=source,
                    parent=best,
                    island=best.island,
                    result=result,
                    edit_kind="carry",
                    edit=child.edit,
                    model=child.model,
                    inspirations=(child,),
                    fp=fp if source is applied.source else None,  # a tuned source has its own
                    edit_match=applied.match,  # the rule that located the edit on the best
                ),
                self._scored_source(applied.source, result),
                applied.source,
                result,
                None,
                None,
                best.score,
                time.perf_counter(),
                0.0,
            )
        finally:
            self._in_flight.discard(carried_id)
            self._reserved -= 1 + taken  # the evaluation the caller reserved, and the trials
