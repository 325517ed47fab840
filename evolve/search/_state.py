"""The search's own state beside the islands: built-in descriptors, the novelty filter and the
prompt variants of one run, as ``[search]`` turns them on.

The controller asks it three things per candidate: which prompt variant asks (before the
proposal), whether the child is new enough to evaluate (after the edit applied), and the
descriptors that place an ok child in a cell (before it is stored). Everything it keeps is
rebuilt from the archive when a session starts.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from evoforge.archive import EvalResult, Program, PromptVariant, Status
from evoforge.evolve.models import ModelError
from evoforge.evolve.prompts import PromptEvolution, templates_of
from evoforge.evolve.proposals import Question
from evoforge.islands import (
    BUILTIN_DESCRIPTORS,
    BuiltinDescriptors,
    Fingerprint,
    NoveltyFilter,
    SeenRanges,
    Verdict,
    with_builtin_descriptors,
)
from evoforge.problems.adapters import feature_metrics

if TYPE_CHECKING:
    from evoforge.archive import Archive, RunInfo
    from evoforge.evolve.config import RunConfig
    from evoforge.evolve.models import ModelSpec
    from evoforge.evolve.proposals import Answer
    from evoforge.problems import Problem

log = logging.getLogger("evoforge")

AskModel = Callable[[Question], "Awaitable[Answer]"]
"""How the search asks a model a question: the proposer's ``ask``."""

# Streams of the candidate's generator keyed (run seed, seq, stream): each feature draws from
# its own, so turning one on or off leaves every other draw of the run as it was.
NOVELTY_STREAM, VARIANT_STREAM, VARIATION_STREAM = 2, 3, 4


class SearchState:
    """Built-in descriptors, the novelty filter and prompt co-evolution of one run.

    Attributes:
        problem: the problem as the search bins it: with the built-in descriptors when it
            declares none and ``[search] descriptors = "builtin"``.
        builtin: computes the built-in descriptors (None when the problem has its own or
            they are off).
        scaled: descriptor -> the metric it is read from, min-max scaled over the values
            the run has seen (an OpenEvolve folder's metric-named feature dimensions).
        ranges: those values' ranges (the run's: rebuilt from its ok programs).
        novelty: the novelty filter (None when off).
        prompts: the run's prompt variants (None when prompts do not evolve).
    """

    def __init__(self, archive: Archive, run: RunInfo, problem: Problem, config: RunConfig) -> None:
        search = config.search
        self.archive, self.run_id, self.seed = archive, run.id, run.seed
        self.builtin: BuiltinDescriptors | None = None
        if search.descriptors == "builtin" and not problem.descriptors:
            problem = with_builtin_descriptors(problem)
        declared = {d.name for d in problem.descriptors}
        self._builtin_names = declared & {d.name for d in BUILTIN_DESCRIPTORS}
        if self._builtin_names:
            # the built-in ones, or ones the problem declares by their names (an OpenEvolve
            # folder's complexity and diversity): computed here when evaluate() left them out
            self.builtin = BuiltinDescriptors(problem.seed_source, problem.language)
        self.problem = problem
        self.scaled = feature_metrics(problem)
        seen = archive.metric_ranges(run.id, self.scaled.values())
        self.ranges = SeenRanges(
            {name: seen[metric] for name, metric in self.scaled.items() if metric in seen}
        )
        self.novelty = (
            NoveltyFilter(
                archive,
                run.id,
                similarity=search.near_duplicate_similarity,
                rejection=search.near_duplicate_rejection,
                language=problem.language,
            )
            if search.novelty
            else None
        )
        self.prompts: PromptEvolution | None = None
        if search.prompt_evolution:
            self.prompts = PromptEvolution(search.prompt_variant_every)
            self.prompts.start(archive, run.id, problem, config.prompts)

    def _rng(self, seq: int, stream: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, seq, stream])

    # --- before the proposal -----------------------------------------------------------

    def choose_variant(self, seq: int) -> PromptVariant | None:
        """The prompt variant that asks for candidate ``seq`` (None: the problem's own)."""
        if self.prompts is None:
            return None
        return self.prompts.choose(self._rng(seq, VARIANT_STREAM))

    @staticmethod
    def templates(variant: PromptVariant | None) -> Mapping[str, str]:
        """The template overrides a proposal request carries."""
        return {} if variant is None else templates_of(variant)

    # --- before the evaluation ---------------------------------------------------------

    def reject(self, source: str, island: int, seq: int, fp: Fingerprint) -> Verdict | None:
        """Why the novelty filter rejects this child (None: evaluate it, and call
        :meth:`evaluated` once it is stored)."""
        if self.novelty is None:
            return None
        verdict = self.novelty.check(source, island, self._rng(seq, NOVELTY_STREAM), precomputed=fp)
        if verdict is None:
            self.novelty.begin(fp.key)
        return verdict

    def has_twin(self, fp: Fingerprint) -> bool:
        """Whether a program of the run (or a child being evaluated) is equivalent to this
        one (the novelty filter's syntax-tree rule; False when the filter is off)."""
        return self.novelty is not None and self.novelty.twin(fp.key) is not None

    def evaluated(self, fp: Fingerprint) -> None:
        """A child that passed :meth:`reject` is stored (or abandoned)."""
        if self.novelty is not None:
            self.novelty.end(fp.key)

    @staticmethod
    def rejected(verdict: Verdict) -> EvalResult:
        """The result stored for a rejected child: status duplicate, no evaluation."""
        return EvalResult(Status.DUPLICATE, artifacts=verdict.artifacts(), evaluations=0)

    # --- before the commit --------------------------------------------------------------

    def describe(self, result: EvalResult, source: str) -> None:
        """Scale an ok result's descriptors read from metrics over the values the run has
        seen, and add the built-in descriptors its evaluator left out."""
        if result.status != Status.OK:
            return
        for name in self.scaled.keys() & result.descriptors.keys():
            result.descriptors[name] = self.ranges.scale(name, result.descriptors[name])
        if self.builtin is None:
            return
        missing = self._builtin_names - set(result.descriptors)
        if missing:
            values = self.builtin.values(source)
            result.descriptors.update({name: values[name] for name in missing})

    # --- after the commit ---------------------------------------------------------------

    def record(self, program: Program, parent_score: float | None) -> None:
        """Count a stored child for the variant that asked for it."""
        if self.prompts is not None:
            self.prompts.record_child(program, parent_score)

    async def evolve_prompts(
        self,
        evaluations: int,
        seq: int,
        spec: ModelSpec,
        ask: AskModel,
    ) -> PromptVariant | None:
        """When a new variant is due, have ``spec``'s model write it from the best one (the
        built-in bank with the offline model, or when the model's answer is unusable)."""
        if self.prompts is None or not self.prompts.due(evaluations):
            return None

        async def rewrite(messages: Sequence[Mapping[str, str]]) -> str:
            seed = int(self._rng(seq, VARIATION_STREAM).integers(2**31 - 1))
            question = Question(
                seq, tuple(dict(m) for m in messages), spec, seed, (self.seed, seq, 5)
            )
            answer = await ask(question)
            if answer.failure is not None or answer.completion is None:
                raise (answer.failure.error() if answer.failure else ModelError("no answer", 0))
            return answer.completion.text

        offline = spec.model.startswith("offline/")
        variant = await self.prompts.maybe_evolve(
            self.archive,
            evaluations=evaluations,
            seq=seq,
            rng=self._rng(seq, VARIATION_STREAM),
            ask=None if offline else rewrite,
        )
        if variant is not None:
            log.info("run %s: prompt variant %s (%s)", self.run_id, variant.id, variant.origin)
        return variant
