"""The asynchronous steady-state controller.

Two independent limits: model calls in flight (``model_slots``) and evaluations in flight
(``workers``). A candidate holds a model slot only while its proposal is made and an
evaluation slot only while it is evaluated, so a slow model never idles an evaluator and a
slow evaluation never blocks model calls (beyond a bounded queue of ready candidates).

The controller's loop does selection, reads the prompt context from the archive, and commits
outcomes; the proposal itself (prompt, model call, answer parsing, edit, syntax check) runs in
proposal worker processes (:mod:`evoforge.evolve.proposals`), so litellm's per-call CPU never
holds up the loop that commits results.

Every outcome is committed in one SQLite transaction on the event-loop thread (program row,
grid offers, island counters, events, run counters, next sequence number), so a ``kill -9``
loses only uncommitted in-flight work, which resume redoes.

Randomness is keyed by ``(run seed, seq)``: candidate ``seq`` always draws the same numbers,
whatever happened before it. With one evaluation slot candidates run one at a time, so a run,
and a resumed run, are reproducible.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from evoforge.archive import EvalResult, Status, model_outcomes, program_id
from evoforge.evaluators import contain_result
from evoforge.evaluators.tuning import TRIAL_BUDGET, TrialBudget
from evoforge.evolve.models import (
    ModelPool,
    ModelSpec,
)
from evoforge.evolve.prompts import Mode, PromptContext
from evoforge.evolve.proposals import Answer, Proposal, Question
from evoforge.evolve.run._endings import Allowance, Budgets, Ending
from evoforge.evolve.run._host_fit import changed_constant_trials
from evoforge.evolve.run._lessons import Lessons
from evoforge.evolve.run._proposer import Proposer, make_proposer, proposal_setup
from evoforge.evolve.run._reuse import AnswerReuse, carries
from evoforge.evolve.run._snapshot import (
    EngineTimings,
    Progress,
    SessionReport,
    Snapshot,
)
from evoforge.evolve.run._split import fell_short
from evoforge.evolve.search import Asking, SearchState, TransferSource
from evoforge.islands import Outcome, fingerprint
from evoforge.plugins import pm

log = logging.getLogger("evoforge")

if TYPE_CHECKING:
    from evoforge.archive import Archive, RunInfo
    from evoforge.evaluators import Evaluator
    from evoforge.evolve.config import RunConfig
    from evoforge.islands import Islands
    from evoforge.problems import Problem


# A child whose evaluation was started this many times without being recorded (each time the
# engine stopped first) is recorded as crashed instead of being evaluated again.
MAX_UNFINISHED = 2

# A model's raw answer is stored with every attempt it produced; past this it is cut (with a
# note), so a runaway 1 MB answer is kept as evidence without bloating the archive.
ANSWER_STORE_CHARS = 200_000


class SeedError(RuntimeError):
    """The seed program does not evaluate to ``ok``; the run cannot start."""


def shorten(text: str, limit: int = 600) -> str:
    """``text`` cut in the middle to about ``limit`` characters.

    An error says its cause first ("the program defines no function `main()`; the problem
    calls main(...)") and a traceback last: keeping both ends keeps both, where keeping the
    tail kept only the end of a long argument list.
    """
    if len(text) <= limit:
        return text
    head, tail = (2 * limit) // 3, limit // 4
    return f"{text[:head]} [... {len(text) - head - tail} characters cut ...] {text[-tail:]}"


class Controller(AnswerReuse):
    """Runs one session of a run: from its current state until a budget, a stop or a failure."""

    def __init__(
        self,
        archive: Archive,
        run: RunInfo,
        problem: Problem,
        config: RunConfig,
        evaluator: Evaluator,
        islands: Islands,
        *,
        progress: Progress | None = None,
        proposer: Proposer | None = None,
        allowance: Allowance | None = None,
        eval_slots: asyncio.Semaphore | None = None,
        transfer: TransferSource | None = None,
    ) -> None:
        # Built-in descriptors, novelty filter, prompt variants; the problem as it is binned.
        self.search = SearchState(archive, run, problem, config)
        problem = self.search.problem
        self.archive, self.run, self.problem, self.config = archive, run, problem, config
        self.evaluator, self.islands, self.progress = evaluator, islands, progress
        self.proposer = proposer or make_proposer(problem, config)
        self._setup = proposal_setup(problem, config)  # to apply an answer again
        self._carry_to_best = config.search.carry_to_best
        self.timings = EngineTimings()
        self.snapshot = Snapshot(
            run_id=run.id,
            budget=config.budget,
            objective=problem.primary,
            evaluations=run.evaluations,
            attempts=run.attempts,
            duplicates=run.duplicates,
            best_score=run.best_score,
            best_program_id=run.best_program_id,
            tokens_in=run.tokens_in or 0,
            tokens_out=run.tokens_out or 0,
            cost_usd=run.cost_usd or 0.0,
            status_counts=Counter(archive.status_counts(run.id)),
            island_best={
                i: archive.island_state(run.id, i).best_score for i in range(config.islands.count)
            },
        )
        self._next_seq = self._resume_seq = run.next_seq
        self._reserved = 0  # dispatched candidates that may still consume an evaluation
        self._in_flight: set[str] = set()  # ids being evaluated: a twin is a duplicate
        self._stop = asyncio.Event()
        self._stop_reason = ""
        self.budgets = Budgets(config, self.snapshot, run.elapsed_s or 0.0)
        # A suite's task: more budget is granted as it is spent, and evaluation slots are
        # shared with the suite's other tasks.
        self.allowance, self._shared_slots = allowance, eval_slots
        self.pool = ModelPool(
            config.ensemble_specs,
            policy=config.ensemble,
            cooldown_s=config.model_cooldown_s,
            outage_s=config.outage_s,
        )
        self.pool.replay(model_outcomes(archive, run.id))  # the bandit remembers across sessions
        # What each candidate asks: selection, mode, context, model; repeated requests varied.
        self.asking = Asking(
            archive, run, problem, config, islands, self.search, self.pool, transfer
        )
        self.lessons = Lessons(archive, run.id, config.ensemble_specs)  # servers' windows
        # trials for the constants an edit changed (0: off here, or the problem tunes knobs)
        self._tune_changed = changed_constant_trials(config, problem)[0]

    # --- public ------------------------------------------------------------------------------

    def request_stop(self, reason: str) -> None:
        """Stop taking work, cancel what is in flight, record the stop (signal handlers)."""
        if not self._stop.is_set():
            self._stop_reason = reason
            self._stop.set()

    async def run_session(self) -> SessionReport:
        """Run until a budget is reached, a stop is requested, or the run fails.

        Cancelling the task that awaits this (``asyncio.run`` does on Ctrl-C) ends the
        session ``stopped``, recorded like any stop, before the cancellation goes on.
        """
        try:
            return await self._run_session()
        except asyncio.CancelledError:
            self._end("stopped", "cancelled")
            raise

    async def _run_session(self) -> SessionReport:
        # Proposal workers import litellm (seconds): they start while the seed is evaluated.
        proposer_started = asyncio.create_task(self.proposer.start())
        try:
            if self.archive.count_programs(self.run.id) == 0:
                await self._seed()
            await proposer_started
            await self.proposer.wait_ready()
            # Rates and the wall-time budget exclude start-up.
            self.snapshot.session_started = self.budgets.start()
            return await self._steady_state()
        finally:
            proposer_started.cancel()
            await asyncio.gather(proposer_started, return_exceptions=True)
            self.timings.proposals = await self.proposer.close()

    async def _steady_state(self) -> SessionReport:
        model_slots = asyncio.Semaphore(self.config.model_slots)
        eval_slots = self._shared_slots or asyncio.Semaphore(self.config.workers)
        max_pending = (
            1 if self.config.reproducible else (self.config.model_slots + 2 * self.config.workers)
        )
        tasks: set[asyncio.Task[None]] = set()
        stop_waiter = asyncio.create_task(self._stop.wait())
        ending: Ending | None = None
        try:
            while not self._stop.is_set():
                ending = ending or self.budgets.ending()
                if ending and ending.spent and not tasks and self.allowance is not None:
                    ending = await self._extend(stop_waiter)
                    continue
                if ending and (not tasks or not ending.drain):
                    break
                room = self.snapshot.evaluations + self._reserved < self.budgets.evaluations
                if not ending and room and len(tasks) < max_pending:
                    seq, self._next_seq = self._next_seq, self._next_seq + 1
                    self._reserved += 1
                    tasks.add(asyncio.create_task(self._candidate(seq, model_slots, eval_slots)))
                    continue
                done, _ = await asyncio.wait(
                    tasks | {stop_waiter},
                    timeout=self.budgets.wall_remaining(),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                for task in done - {stop_waiter}:
                    tasks.discard(task)
                    task.result()  # a bug in the engine must surface, not vanish
        finally:
            stop_waiter.cancel()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._stop.is_set():
            return self._end("stopped", self._stop_reason)
        assert ending is not None
        return self._end(ending.status, ending.reason)

    async def _extend(self, stop_waiter: asyncio.Task[bool]) -> Ending | None:
        """Ask the allowance for more budget (the session's spent, nothing is in flight):
        None to go on with the new budget, or the ending; a stop meanwhile wins."""
        assert self.allowance is not None
        waited = time.monotonic()
        asked = asyncio.ensure_future(self.allowance.extend(self.snapshot.evaluations))
        try:
            await asyncio.wait({asked, stop_waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not asked.done():
                asked.cancel()
                await asyncio.gather(asked, return_exceptions=True)
            self.budgets.idle(time.monotonic() - waited)  # waiting is not running
        if self._stop.is_set():
            return None  # the loop ends the session as stopped
        answer = asked.result()
        if isinstance(answer, Ending):
            return answer
        if answer <= self.snapshot.evaluations:
            raise ValueError(f"an allowance granted {answer} evaluations, no more than spent")
        self.budgets.extend(answer)
        return None

    # --- one candidate -----------------------------------------------------------------------

    async def _seed(self) -> None:
        source = self.problem.seed_source
        trials = TrialBudget(self._take_trial)
        TRIAL_BUDGET.set(trials)
        try:
            result = contain_result(await self.evaluator.evaluate(source))
        finally:
            self._reserved -= trials.taken
        seed = self._program(
            seq=0,
            source=result.source or source,
            parent=None,
            island=0,
            result=result,
            edit_kind="seed",
        )
        self._next_seq = max(self._next_seq, 1)
        with self.archive.transaction():
            self.archive.add_program(seed)
            if seed.status == Status.OK:
                self.islands.seed(seed)
            self._account(seed, evaluated=result.evaluations)
        if seed.status != Status.OK:
            reference = result.artifacts.get("reference_error")
            if reference:  # the problem's own reference failed: no program can be judged
                raise SeedError(
                    f"the reference of {self.problem.name} failed, so no program can be "
                    f"checked (the seed was not at fault): {shorten(reference, 1200)}"
                )
            details = "; ".join(f"{k}: {shorten(v)}" for k, v in result.artifacts.items())
            raise SeedError(
                f"the seed program of {self.problem.name} evaluated to "
                f"'{seed.status}', not 'ok' ({details or 'no details'}); fix the seed "
                f"or the problem's evaluate() in {self.problem.spec_path}"
            )
        self._notify(seed, Outcome())

    async def _candidate(
        self, seq: int, model_slots: asyncio.Semaphore, eval_slots: asyncio.Semaphore
    ) -> None:
        try:
            await self._attempt(seq, model_slots, eval_slots)
        finally:
            self._reserved -= 1

    async def _attempt(
        self, seq: int, model_slots: asyncio.Semaphore, eval_slots: asyncio.Semaphore
    ) -> None:
        tick = time.perf_counter()
        plan = self.asking.plan(seq, self.snapshot.evaluations)
        overhead = time.perf_counter() - tick
        answered = False
        try:
            async with model_slots:
                if self.timings.first_proposal_at is None:
                    self.timings.first_proposal_at = time.monotonic()
                proposal = await self.proposer.propose(plan.request)
            answered = proposal.completion is not None
            await self._use_proposal(
                seq,
                plan.request.spec,
                proposal,
                plan.context,
                plan.island,
                eval_slots,
                overhead,
                plan.variant.id if plan.variant is not None else None,
            )
            spec = plan.request.spec
            await self.search.evolve_prompts(self.snapshot.evaluations, seq, spec, self._ask)
        finally:
            self.asking.settle(plan, answered=answered)

    async def _use_proposal(
        self,
        seq: int,
        spec: ModelSpec,
        proposal: Proposal,
        context: PromptContext,
        island: int,
        eval_slots: asyncio.Semaphore,
        overhead: float,
        variant: str | None = None,
    ) -> None:
        """Record a failed call, or check the child, evaluate it and commit the outcome."""
        tick = time.perf_counter()
        if proposal.failure is not None or proposal.completion is None:
            assert proposal.failure is not None
            self._model_failed(seq, spec, proposal.failure.error())
            return
        completion = proposal.completion
        parent = context.parent  # in repair mode, the failed program being fixed
        self.timings.model_s.append(completion.latency_s)
        self.timings.prompt_cpu_s.append(proposal.prompt_cpu_s)
        self.timings.edit_cpu_s.append(proposal.edit_cpu_s)
        mode = Mode(context.mode)
        partners = (*context.inspirations, *filter(None, [context.second_parent]))
        common: dict[str, Any] = dict(
            seq=seq,
            parent=parent,
            island=island,
            model=completion.model,
            inspirations=partners,
            edit=_stored_answer(completion.text),
            prompt_variant=variant,
            # another task's elite its prompt offered (cross-task transfer), if any
            transfer_from=context.foreign[0].ref if context.foreign else None,
        )
        applied = proposal.child
        if applied is None:
            failed = EvalResult(Status.EDIT_ERROR, artifacts={"error": proposal.edit_error or ""})
            program = self._program(source=None, result=failed, edit_kind=str(mode), **common)
            self._commit(program, completion, spec, parent.score, tick, overhead)
            return
        # A diff-mode answer may come back as a whole program: record what it really was.
        kind = applied.kind if mode in (Mode.DIFF, Mode.REWRITE) else str(mode)
        common["edit_match"] = applied.match  # the rule that located its SEARCH texts
        child_id = program_id(applied.source)
        if child_id in self._in_flight or self.archive.has_program(self.run.id, child_id):
            self._commit_duplicate(child_id, kind, common, completion, spec, tick, overhead)
            return
        # The child's fingerprint (equivalence key, shingles): made by the proposal worker.
        fp = proposal.fingerprint or fingerprint(applied.source, self.problem.language)
        if proposal.syntax_error is not None:
            failed = EvalResult(Status.SYNTAX_ERROR, artifacts={"error": proposal.syntax_error})
            program = self._program(
                source=applied.source, result=failed, edit_kind=kind, fp=fp, **common
            )
            self._commit(program, completion, spec, parent.score, tick, overhead)
            return
        verdict = self.search.reject(applied.source, island, seq, fp)
        if verdict is not None:
            self._reject(verdict, applied.source, kind, fp, common, completion, spec, tick)
            return
        self._in_flight.add(child_id)
        overhead += time.perf_counter() - tick
        # Knob-tuning trials take from the budget; the parent's score decides whether to tune.
        trials = TrialBudget(self._take_trial, parent.score, parent.source, self._tune_changed)
        TRIAL_BUDGET.set(trials)  # this candidate's task only
        parts: set[str] = set()  # ids of its blocks evaluated alone: in flight until stored
        try:
            result = await self._evaluate(seq, child_id, applied.source, eval_slots)
            scored = applied.source
            if proposal.parts and fell_short(self.problem, result, parent.score):
                result, scored = await self._split(
                    seq, proposal.parts, result, applied.source, trials, eval_slots, parts
                )
            # the evaluation to carry the answer to the run's best, reserved before this one
            # is counted as spent (:meth:`_carry`)
            carry = (
                self._carry_to_best
                and carries(self.problem, result, parent, applied.kind)
                and self._take_trial()
            )
            tick = time.perf_counter()
            program = self._store(
                lambda source, result: self._program(
                    source=source,
                    result=result,
                    edit_kind=kind,
                    fp=fp if source is applied.source else None,  # a tuned source has its own
                    **common,
                ),
                self._scored_source(scored, result),
                applied.source,
                result,
                completion,
                spec,
                parent.score,
                tick,
                overhead,
            )
            if carry:
                await self._carry(program, parent, completion.text, eval_slots)
        finally:
            self._in_flight.discard(child_id)
            self._in_flight.difference_update(parts)
            self.search.evaluated(fp)
            self._reserved -= trials.taken

    async def _evaluate(
        self, seq: int, child_id: str, source: str, eval_slots: asyncio.Semaphore
    ) -> EvalResult:
        """Evaluate one child: its result, bounded (:func:`contain_result`), whatever the
        evaluator returned.

        The evaluation is noted in the archive first (:meth:`Archive.begin_evaluation`); a child
        whose evaluation was started :data:`MAX_UNFINISHED` times before, each time without being
        recorded (the engine failed or was killed meanwhile), is recorded as crashed instead of
        being evaluated again, so no candidate can stop a run on every resume.
        """
        started_before = self.archive.begin_evaluation(self.run.id, child_id, seq) - 1
        if started_before >= MAX_UNFINISHED:
            return EvalResult(
                Status.CRASHED,
                artifacts={
                    "error": f"its evaluation was started {started_before} times before and "
                    "never finished: the engine stopped (failed or was killed) each time. It is "
                    "recorded as crashed instead of being evaluated again"
                },
            )
        try:
            async with eval_slots:
                started = time.perf_counter()
                result = await self.evaluator.evaluate(source)
                busy = time.perf_counter() - started
        except asyncio.CancelledError:
            # A clean stop (or another candidate's failure) cancelled it: nothing against it.
            self.archive.forget_evaluation(self.run.id, child_id)
            raise
        self.timings.eval_busy_s += busy
        self.timings.eval_s.append(busy)
        result = contain_result(result)
        result.timings.setdefault("eval_wall_s", busy)
        return result

    async def _ask(self, question: Question) -> Answer:
        """Ask a model a question beside the candidates (a prompt variant's rewrite): its
        tokens and cost count against the run's budgets like any call's. It is not stored
        as a call of a candidate, so the model ensemble's bandit does not count it."""
        answer = await self.proposer.ask(question)
        if answer.completion is not None:
            self._charge(answer.completion)
        return answer

    def _take_trial(self) -> bool:
        """Reserve one evaluation of the budget for a knob-tuning trial, if there is room."""
        if self.snapshot.evaluations + self._reserved >= self.budgets.evaluations:
            return False
        self._reserved += 1
        return True

    def _scored_source(self, applied: str, result: EvalResult) -> str:
        """The program to store: as tuned by the evaluator, unless that one is already in the
        run (then the untuned text, with a note)."""
        tuned = result.source
        if tuned is None or tuned == applied:
            return applied
        tuned_id = program_id(tuned)
        if tuned_id in self._in_flight or self.archive.has_program(self.run.id, tuned_id):
            result.artifacts["tuning"] = (
                result.artifacts.get("tuning", "")
                + f"; the tuned program is already in the run as {tuned_id}: stored untuned"
            )
            return applied
        return tuned

    # --- endings -----------------------------------------------------------------------------

    def _end(self, status: str, reason: str) -> SessionReport:
        with self.archive.transaction():
            self.archive.update_run(
                self.run.id, status=status, stop_reason=reason, elapsed_s=self.budgets.elapsed()
            )
            kind = {"finished": "run_finish", "stopped": "run_stop"}.get(status, "run_fail")
            self.archive.record_event(self.run.id, kind, data={"reason": reason})
        pm.hook.run_finished(run_id=self.run.id, status=status, reason=reason)
        self._report()
        return SessionReport(
            status,
            reason,
            self.snapshot.evaluations,
            self.snapshot.best_score,
            self.snapshot.best_program_id,
        )


def _stored_answer(text: str) -> str:
    if len(text) <= ANSWER_STORE_CHARS:
        return text
    return (
        text[:ANSWER_STORE_CHARS]
        + f"\n[evoforge: answer cut here; it was {len(text)} characters long]"
    )
