"""How the controller records what happened to a candidate: the program's row, the grid
offers, the island's counters, the model call, the run's counters, in one transaction.

:class:`Recorder` is mixed into :class:`~evoforge.evolve.Controller`; it holds no state of its
own (the attributes below are the controller's), so the loop and the bookkeeping of its
outcomes read apart.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evoforge.archive import EvalResult, Program, Status, improved, program_id
from evoforge.evolve.models import (
    Completion,
    ModelError,
    ModelOutage,
    ModelPool,
    ModelSpec,
    call_tokens,
    record_answer,
    record_failure,
)
from evoforge.islands import Fingerprint, Outcome, Verdict, fingerprint
from evoforge.plugins import pm

if TYPE_CHECKING:
    from evoforge.archive import Archive, RunInfo
    from evoforge.evolve.run._endings import Budgets
    from evoforge.evolve.run._lessons import Lessons
    from evoforge.evolve.run._snapshot import EngineTimings, Progress, Snapshot
    from evoforge.evolve.search import Asking, SearchState
    from evoforge.islands import Islands
    from evoforge.problems import Problem


class Recorder:
    """The controller's commits (see the module docstring)."""

    archive: Archive
    run: RunInfo
    problem: Problem
    islands: Islands
    search: SearchState
    asking: Asking
    snapshot: Snapshot
    budgets: Budgets
    timings: EngineTimings
    pool: ModelPool
    lessons: Lessons
    progress: Progress | None
    _resume_seq: int

    def _program(
        self,
        *,
        seq: int,
        source: str | None,
        parent: Program | None,
        island: int,
        result: EvalResult,
        edit_kind: str = "diff",
        edit: str | None = None,
        model: str | None = None,
        inspirations: tuple[Program, ...] = (),
        fp: Fingerprint | None = None,
        prompt_variant: str | None = None,
        edit_match: str | None = None,
        transfer_from: str | None = None,
    ) -> Program:
        """The row of one attempt; ``fp``: the fingerprint of ``source`` when known.

        An ok program gets the built-in descriptors the run uses and its evaluator did not
        give (all of them for a problem that declares none; ``size``/``distance`` where an
        OpenEvolve folder's dimensions map to them), measured against the seed.
        """
        key = None
        if source is not None:
            key = (fp or fingerprint(source, self.problem.language)).key
            self.search.describe(result, source)
        return Program.from_result(
            result,
            self.problem,
            run_id=self.run.id,
            seq=seq,
            source=source,
            parent_id=parent.id if parent else None,
            island=island,
            generation=parent.generation + 1 if parent else 0,
            edit=edit,
            edit_kind=edit_kind,
            inspiration_ids=[p.id for p in inspirations],
            model=model,
            ast_key=key,
            prompt_variant=prompt_variant,
            edit_match=edit_match,
            transfer_from=transfer_from,
        )

    def _reject(
        self,
        verdict: Verdict,
        source: str,
        kind: str,
        fp: Fingerprint,
        common: dict[str, Any],
        completion: Completion,
        spec: ModelSpec,
        tick: float,
    ) -> None:
        """Store a child the novelty filter rejected: status duplicate, not evaluated (no
        island hears of it: it says nothing about the island's progress)."""
        result = self.search.rejected(verdict)
        program = self._program(source=source, result=result, edit_kind=kind, fp=fp, **common)
        self._commit(program, completion, spec, common["parent"].score, tick, 0.0)

    def _store(
        self,
        make: Callable[[str, EvalResult], Program],
        source: str,
        evaluated: str,
        result: EvalResult,
        completion: Completion | None,
        spec: ModelSpec | None,
        parent_score: float | None,
        tick: float,
        overhead: float,
    ) -> Program:
        """Commit an evaluated candidate: the row ``make`` builds of ``source`` (the program
        to store: ``evaluated`` as tuned or split, or itself) and ``result``; the stored row.

        When the stored program is not the one evaluated, the evaluated one's note is dropped.
        A result the archive cannot store costs its candidate, never the run: it is recorded
        as crashed, with why.
        """
        program = make(source, result)
        try:
            self._commit(program, completion, spec, parent_score, tick, overhead, result)
            if source != evaluated:  # tuned or split: the evaluated one's note goes
                self.archive.forget_evaluation(self.run.id, program_id(evaluated))
        except (ValueError, TypeError, ArithmeticError, RecursionError, MemoryError) as exc:
            # contain_result() makes this unreachable for every value we know of; should an
            # unknown one get through, it costs its candidate, never the run.
            unstorable = EvalResult(
                Status.CRASHED,
                artifacts={
                    "error": "the engine could not store this candidate's result "
                    f"({type(exc).__name__}: {str(exc)[:500]}); it is recorded without it"
                },
                timings={k: v for k, v in result.timings.items() if k == "eval_wall_s"},
                evaluations=result.evaluations,
            )
            program = make(evaluated, unstorable)
            self._commit(program, completion, spec, parent_score, tick, overhead, unstorable)
        return program

    def _commit(
        self,
        program: Program,
        completion: Completion | None,
        spec: ModelSpec | None,
        parent_score: float | None,
        tick: float,
        overhead: float,
        result: EvalResult | None = None,
    ) -> None:
        evaluated = program.status.evaluated
        count = (result.evaluations if result is not None else 1) if evaluated else 0
        with self.archive.transaction():
            self.archive.add_program(program)
            if program.status == Status.DUPLICATE:  # an exact copy or a rejected equivalent
                self.archive.bump_run(self.run.id, duplicates=1)
            if "requeued" in program.artifacts:  # the Ray executor lost a worker on the way
                self.archive.record_event(
                    self.run.id,
                    "eval_requeued",
                    seq=program.seq,
                    data={"program": program.id, "note": program.artifacts["requeued"]},
                )
            outcome = self.islands.record(program) if evaluated else Outcome()
            if completion is not None:  # None: an answer used again (no call of its own)
                self._record_call(program.seq, completion, program.id)
            self._account(program, evaluated=count)
        self.search.record(program, parent_score)
        if completion is not None and spec is not None:
            self.pool.record_success(
                spec,
                improved=improved(program.score, parent_score),
                cost_usd=completion.cost_usd,
                tokens=call_tokens(completion),
            )
        self.timings.overhead_s.append(overhead + time.perf_counter() - tick)
        self.snapshot.duplicates += program.status == Status.DUPLICATE
        self._notify(program, outcome)

    def _commit_duplicate(
        self,
        twin: str,
        kind: str,
        common: dict[str, Any],
        completion: Completion,
        spec: ModelSpec,
        tick: float,
        overhead: float,
    ) -> None:
        """Store a child identical to a program of the run (or one being evaluated) as a
        ``duplicate`` attempt without its source (it is ``twin``'s).

        Stored, not only counted: the parent's next prompt then lists it among the recent
        failures, so a model that answers the same prompt the same way (greedy decoding) is
        asked something new instead of repeating itself until the run stalls.
        """
        result = EvalResult(
            Status.DUPLICATE,
            artifacts={
                "error": f"the change reproduces program {twin}, which the run already has; "
                "propose a different change",
                "rule": "exact",
                "duplicate_of": twin,
            },
            evaluations=0,
        )
        program = self._program(source=None, result=result, edit_kind=kind, **common)
        self._commit(program, completion, spec, common["parent"].score, tick, overhead)

    def _model_failed(self, seq: int, spec: ModelSpec, exc: ModelError) -> None:
        """Every attempt of the call goes to the archive; the pool hears of the failure, and
        when every model has been failing for ``outage_s`` the session ends (failed)."""
        with self.archive.transaction():
            retried = record_failure(self.archive, self.run.id, seq, spec.model, exc)
            self.lessons.keep(seq)  # a refusal that named the window
            self._advance(seq)
        self.pool.record_failure(spec, exc.kind, str(exc))
        sent = any(a.status_code is not None or a.latency_s > 0 for a in exc.attempts)
        self.budgets.model_failed(spec.model, exc.kind, str(exc), sent=sent)
        try:
            self.pool.check_outage()
        except ModelOutage as outage:
            self.budgets.outage = str(outage)
        self.snapshot.model_errors += 1
        self.snapshot.model_calls += 1
        self.snapshot.retries += retried
        self.budgets.failed_streak += 1
        self._report()

    def _record_call(self, seq: int, completion: Completion, pid: str | None) -> None:
        """Store the call (and its retried attempts, and the key of its request, so a resumed
        run does not ask it again) and add its tokens and cost to the run (inside the
        transaction)."""
        record_answer(self.archive, self.run.id, seq, completion, pid, self.asking.key_of(seq))
        self.lessons.keep(seq)  # what the server taught with this answer
        self.budgets.model_answered()
        self.snapshot.model_calls += 1
        self.snapshot.retries += len(completion.attempts)
        self._charge(completion)

    def _charge(self, completion: Completion) -> None:
        """Add a call's tokens and known cost to the run (unknown cost adds nothing rather
        than zero: the call is counted as unpriced)."""
        tokens_in, tokens_out = completion.prompt_tokens or 0, completion.completion_tokens or 0
        bumps: dict[str, float] = {"tokens_in": tokens_in, "tokens_out": tokens_out}
        if completion.cost_usd is not None:
            bumps["cost_usd"] = completion.cost_usd
            self.snapshot.cost_usd += completion.cost_usd
        else:
            self.snapshot.unpriced_calls += 1
        self.archive.bump_run(self.run.id, **bumps)
        self.snapshot.tokens_in += tokens_in
        self.snapshot.tokens_out += tokens_out

    def _account(self, program: Program, *, evaluated: int) -> None:
        """Run counters, best-so-far and the next sequence number: inside the transaction.

        ``evaluated``: evaluations the attempt used (0, 1, or more with tuning trials).
        """
        snap = self.snapshot
        self.archive.bump_run(self.run.id, evaluations=int(evaluated), attempts=1)
        if program.score is not None and (
            snap.best_score is None or program.score > snap.best_score
        ):
            snap.best_score, snap.best_program_id = program.score, program.id
            self.archive.update_run(
                self.run.id, best_score=program.score, best_program_id=program.id
            )
        if program.score is not None:
            island_best = snap.island_best.get(program.island)
            if island_best is None or program.score > island_best:
                snap.island_best[program.island] = program.score
        if program.seq == 0 and program.parent_id is None:  # the seed: its time counts
            self.budgets.count_seed(program.timings)
        self._advance(program.seq)
        snap.evaluations += int(evaluated)
        snap.session_evaluations += int(evaluated)
        snap.attempts += 1
        snap.status_counts[program.status] += 1
        self.budgets.failed_streak = 0 if evaluated else self.budgets.failed_streak + 1

    def _advance(self, seq: int) -> None:
        """Persist where resume starts: after the highest sequence number settled so far."""
        self._resume_seq = max(self._resume_seq, seq + 1)
        self.archive.update_run(
            self.run.id, next_seq=self._resume_seq, elapsed_s=self.budgets.elapsed()
        )

    def _notify(self, program: Program, outcome: Outcome) -> None:
        pm.hook.program_added(run_id=self.run.id, program=program, added=int(outcome.added))
        for kind, island, data in outcome.events:
            pm.hook.island_event(run_id=self.run.id, kind=kind, island=island, data=data)
        self._report()

    def _report(self) -> None:
        if self.progress is not None:
            self.progress.update(self.snapshot)
