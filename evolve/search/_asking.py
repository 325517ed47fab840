"""What one candidate asks the model: parent, mode, prompt context, model, and how a request
that was already sent is varied.

:class:`Asking` makes a candidate's :class:`Plan`: the island's selection (a resting parent
passed over, :mod:`evoforge.evolve.search._resting`), a failure to repair or an edit mode, the
prompt context read from the archive, the model and its seed, the prompt variant; and the
:class:`~evoforge.evolve.proposals.ProposalRequest` they make. With ``[search]
request_variation`` on, a request whose key (:func:`~evoforge.evolve.search._requests.request_key`)
this session has already sent is varied before it goes out, by what honestly varies, in
this order, each tried until the key is new:

1. the selection and the mode drawn anew (:data:`REDRAWS` times; another parent or other
   inspirations make another prompt; with a single elite on the island they cannot);
2. then, beside a fresh draw, a focus instruction from the built-in bank
   (:data:`~evoforge.evolve.prompts.FRAGMENTS`, "tune the numeric constants...", "try a
   different algorithm...") added to the task: the same program asked about from another
   angle, in the drawn mode, then as a diff or a rewrite. The fragment tried first is drawn
   per candidate, so concurrent candidates on one parent, and two seeds' runs, mostly take
   different ones (a collision is one more step of the ladder).

A repair keeps its failed program and takes no focus (a fix is not an optimisation): it is
sent as it is. When every variation was seen too, the last one is sent (counted as
``repeated``): the candidate is never dropped.

Draws: the first plan uses the candidate's generator exactly as before this module existed
(keyed ``(run seed, seq)``), so a run whose requests are all new draws the same numbers; the
``k``-th variation draws from its own stream ``(run seed, seq, VARY_STREAM, k)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evoforge.evolve.prompts import (
    FOCUS,
    FRAGMENTS,
    Foreign,
    Mode,
    OptimizationMemory,
    PromptContext,
    choose_mode,
    gather_context,
    load_templates,
    pick_repair,
)
from evoforge.evolve.proposals import ProposalRequest, without_answers
from evoforge.evolve.search._requests import MAX_ANSWERED, RequestLedger, request_key
from evoforge.evolve.search._resting import rests

if TYPE_CHECKING:
    from evoforge.archive import Archive, Program, PromptVariant, RunInfo
    from evoforge.evolve.config import RunConfig
    from evoforge.evolve.models import ModelPool, ModelSpec
    from evoforge.evolve.search._state import SearchState
    from evoforge.islands import Islands, Selection
    from evoforge.problems import Problem

REDRAWS = 2
"""Variations that only draw the selection and mode anew, before focus instructions."""
VARY_STREAM = 6
"""Stream of the candidate's generators that variations draw from (see :mod:`._search_state`
for the others)."""
REST_STREAM = 7
"""Stream of the selection drawn again when the first one picked a resting parent."""
NOTHING_NEW_SHOWN = 3
"""Attempts from the parent that gave nothing new shown in a prompt."""
TRANSFER_STREAM = 8
"""Stream of the candidate's generators that cross-task transfer draws from."""

TransferSource = Callable[[np.random.Generator], Foreign | None]
"""Where a suite's task gets another task's elite for a prompt (None: none this time)."""


@dataclass(frozen=True)
class Plan:
    """One candidate's request and what it was made from.

    Attributes:
        request: what goes to a proposal worker.
        context: the prompt context (with the programs' stored answers: the controller
            stores the child against them).
        island: the island the candidate belongs to.
        variant: the prompt variant that asks (None: the problem's own templates).
        repairing: the failed program a repair candidate fixes (None otherwise).
        key: the request's key in the session's ledger (None with variation off).
    """

    request: ProposalRequest
    context: PromptContext
    island: int
    variant: PromptVariant | None
    repairing: Program | None
    key: bytes | None


class Asking:
    """Plans the candidates of one session (see the module docstring)."""

    def __init__(
        self,
        archive: Archive,
        run: RunInfo,
        problem: Problem,
        config: RunConfig,
        islands: Islands,
        search: SearchState,
        pool: ModelPool,
        transfer: TransferSource | None = None,
    ) -> None:
        self.archive, self.run, self.problem, self.config = archive, run, problem, config
        self.islands, self.search, self.pool = islands, search, pool
        self.transfer = transfer  # a suite's task with cross-task transfer on
        self.memory = OptimizationMemory(refresh_every=config.memory_every)
        self.ledger = None
        if config.search.request_variation:  # a resumed run remembers what it asked
            self.ledger = RequestLedger(archive.answered_request_keys(run.id, MAX_ANSWERED))
        self._keys: dict[int, bytes] = {}  # the key of each candidate in flight, by seq
        self.repairing: set[str] = set()  # failed programs that candidates are repairing
        self.rested = 0  # selections that passed over a resting parent

    # --- a plan ------------------------------------------------------------------------------

    def plan(self, seq: int, evaluations: int) -> Plan:
        """The plan of candidate ``seq`` (``evaluations``: spent so far, for the memory).

        Call :meth:`settle` once its request is answered, failed or abandoned.
        """
        rng = np.random.default_rng([self.run.seed, seq])
        island = self.islands.island_for(seq)
        selection = self._select(island, seq, rng)
        modes = self.config.modes
        failed = pick_repair(self.archive, self.run.id, island, rng, modes, busy=self.repairing)
        mode = (
            Mode.REPAIR
            if failed
            else choose_mode(rng, modes, can_crossover=bool(selection.inspirations))
        )
        context = self._context(selection, mode, rng, failed, evaluations)
        foreign = self._foreign(seq) if failed is None else ()  # a fix borrows nothing
        context = dataclasses.replace(context, foreign=foreign)
        spec = self.pool.choose(rng)
        model_seed = int(rng.integers(2**31 - 1))
        variant = self.search.choose_variant(seq)
        templates = dict(self.search.templates(variant))
        key = None
        if self.ledger is not None:
            key = self._key(context, spec, templates, model_seed)
            if self.ledger.seen(key):
                context, templates, key = self._vary(
                    seq, island, failed, evaluations, (spec, model_seed), templates, (context, key)
                )
            self.ledger.begin(key)
            self._keys[seq] = key
        if failed is not None:
            self.repairing.add(failed.id)
        request = ProposalRequest(
            seq,
            without_answers(context),
            spec,
            model_seed,
            jitter_seed=(self.run.seed, seq, 1),  # the retry backoff's jitter
            templates=templates,
        )
        return Plan(request, context, island, variant, failed, key)

    def settle(self, plan: Plan, *, answered: bool) -> None:
        """The plan's request was answered (or not: failed, cancelled); its repair is over."""
        self._keys.pop(plan.request.seq, None)
        if plan.repairing is not None:
            self.repairing.discard(plan.repairing.id)
        if self.ledger is not None and plan.key is not None:
            if answered:
                self.ledger.answered(plan.key)
            else:
                self.ledger.abandon(plan.key)

    def key_of(self, seq: int) -> bytes | None:
        """The key of candidate ``seq``'s request while it is in flight (None when requests
        are not keyed): stored with its answer, for a resumed run's ledger."""
        return self._keys.get(seq)

    # --- parts -------------------------------------------------------------------------------

    def _foreign(self, seq: int) -> tuple[Foreign, ...]:
        """Another task's elite for this candidate's prompt, when the suite offers one."""
        if self.transfer is None:
            return ()
        found = self.transfer(np.random.default_rng([self.run.seed, seq, TRANSFER_STREAM]))
        return () if found is None else (found,)

    def _select(self, island: int, seq: int, rng: np.random.Generator) -> Selection:
        """The island's selection; drawn again, past the parent, when that parent rests."""
        selection = self.islands.select(island, rng)
        search = self.config.search
        if search.rest_after and rests(
            self.archive,
            self.run.id,
            selection.parent.id,
            seq,
            after=search.rest_after,
            selections=search.rest_selections,
            islands=self.config.islands.count,
        ):
            again = np.random.default_rng([self.run.seed, seq, REST_STREAM])
            selection = self.islands.select(island, again, avoid={selection.parent.id})
            self.rested += 1
        return selection

    def _context(
        self,
        selection: Selection,
        mode: Mode,
        rng: np.random.Generator,
        failed: Program | None,
        evaluations: int,
    ) -> PromptContext:
        search = self.config.search
        return gather_context(
            self.archive,
            self.run.id,
            self.problem,
            selection,
            mode,
            self.config.prompts,
            rng,
            parent=failed,
            memory=self.memory,
            evaluations=evaluations,
            nothing_new_shown=NOTHING_NEW_SHOWN if search.nothing_new_feedback else 0,
            mark_fixed_code=search.mark_fixed_code,
        )

    def _key(
        self, context: PromptContext, spec: ModelSpec, templates: Mapping[str, str], seed: int
    ) -> bytes:
        return request_key(
            context,
            spec,
            templates,
            temperature=self.config.temperature,
            max_tokens=self.config.max_tokens,
            seed=seed,
        )

    def _vary(
        self,
        seq: int,
        island: int,
        failed: Program | None,
        evaluations: int,
        model: tuple[ModelSpec, int],
        templates: dict[str, str],
        first: tuple[PromptContext, bytes],
    ) -> tuple[PromptContext, dict[str, str], bytes]:
        """A variation of the plan whose key is new, or the last one tried (module doc)."""
        assert self.ledger is not None
        self.ledger.varied += 1
        context, key = first
        spec, seed = model
        if failed is not None:  # a repair keeps its program and takes no focus
            self.ledger.repeated += 1
            return context, templates, key
        tried = templates
        # where this candidate starts in the bank: its own draw, so concurrent candidates on
        # one parent, and two seeds' candidates, take different fragments
        start = int(np.random.default_rng([self.run.seed, seq, VARY_STREAM]).integers(1 << 16))
        for k in range(1, REDRAWS + len(FRAGMENTS) + 1):
            rng = np.random.default_rng([self.run.seed, seq, VARY_STREAM, k])
            selection = self._select(island, seq, rng)
            mode = choose_mode(rng, self.config.modes, can_crossover=bool(selection.inspirations))
            drawn = self._context(selection, mode, rng, None, evaluations)
            drawn = dataclasses.replace(drawn, foreign=first[0].foreign)  # the same offer
            fragment = FRAGMENTS[(start + k - REDRAWS - 1) % len(FRAGMENTS)]
            for context in [drawn] if k <= REDRAWS else self._other_modes(drawn):
                tried = templates
                if k > REDRAWS:
                    tried = self._with_focus(templates, context.mode, fragment)
                key = self._key(context, spec, tried, seed)
                if not self.ledger.seen(key):
                    return context, tried, key
        self.ledger.repeated += 1
        return context, tried, key

    def _other_modes(self, context: PromptContext) -> list[PromptContext]:
        """``context``, then as a diff and as a rewrite where those are not its mode and
        their weight is not 0 (the same reading of the archive: only what is asked differs)."""
        modes = self.config.modes
        out = [context]
        for mode, weight in ((Mode.DIFF, modes.diff), (Mode.REWRITE, modes.rewrite)):
            if weight > 0 and mode is not context.mode:
                out.append(dataclasses.replace(context, mode=mode, second_parent=None))
        return out

    def _with_focus(
        self, templates: Mapping[str, str], mode: Mode, fragment: str
    ) -> dict[str, str]:
        """``templates`` with ``fragment`` added to the task of ``mode`` as a focus line."""
        name = f"task_{mode}"
        base = templates.get(name) or load_templates(self.problem, self.config.prompts)[name]
        if fragment in base:
            return dict(templates)
        return {**templates, name: f"{base}\n\n{FOCUS}{fragment}"}
