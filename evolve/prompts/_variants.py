"""Prompt co-evolution: prompt variants chosen by a bandit, new ones written from the best.

A *prompt variant* overrides the system message and the task instructions (templates
``system`` and ``task_*``; the answer formats never vary, since parsing depends on them). It is
an archive member of its own (:class:`~evoforge.archive.PromptVariant`), and every child records
the variant that asked for it (``Program.prompt_variant``). As in AlphaEvolve and ShinkaEvolve,
the prompts evolve beside the programs:

* **fitness**: a variant's children's improvement rate (children that beat their parent, over
  children evaluated; :func:`~evoforge.archive.improved` decides, as for the model ensemble);
* **choice**: Thompson sampling, each variant drawn from Beta(1 + improved, 1 + evaluated -
  improved): a new variant is tried at once (its prior is wide), a bad one fades, and the
  draws come from the candidate's seeded generator, so a run is reproducible;
* **variation**: every ``prompt_variant_every`` evaluations one new variant is made from the
  best one, by the run's model (:meth:`PromptEvolution.rewrite_messages`, shown the recent
  successes and failures; answer read strictly by :meth:`PromptEvolution.parse_rewrite`) or,
  with the offline model or when the rewrite fails, from the built-in bank of instruction
  fragments (:mod:`~evoforge.evolve.prompts._variant_bank`) or by combining two variants.

Nothing is kept that is not in the archive: :meth:`PromptEvolution.start` reads the variants and
their children's counts back, so a resumed run chooses as the interrupted one would have, and
the next variant is due after as many evaluations as the stored variants say.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evoforge.archive import Archive, Program, PromptVariant, improved
from evoforge.base.reasoning import without_reasoning
from evoforge.evolve.prompts._config import PromptConfig
from evoforge.evolve.prompts._templates import (
    PLACEHOLDERS,
    PromptTemplateError,
    check_templates,
    load_templates,
)
from evoforge.evolve.prompts._variant_bank import FOCUS, FRAGMENTS

if TYPE_CHECKING:
    from evoforge.problems import Problem

log = logging.getLogger("evoforge")

VARIED = ("system", "task_diff", "task_rewrite", "task_crossover", "task_repair")
"""Templates a variant holds (the answer formats never vary)."""
FOCUSED = ("task_diff", "task_rewrite", "task_crossover")
"""Task templates a bank fragment is added to (a repair stays a functional fix)."""
MIN_EVIDENCE = 5
"""Evaluated children a variant needs before it can be the best one (else the most tried)."""
MAX_SECTION_CHARS = 4000
"""Longest system message or task instruction a model's rewrite may give."""
SECTIONS = {"system": "system", "task": "task_diff"}
"""Sections of a rewrite answer and the template each becomes."""
_RECENT = 6  # recent successes and failures shown to the model that rewrites
_SUMMARY_CHARS = 300
_TRIES = 16  # draws of a bank variant before giving up on finding a new one
_FENCE = re.compile(r"^(`{3,})[ \t]*([A-Za-z_]*)[ \t]*\n(.*?)^\1[ \t]*$", re.M | re.S)

Ask = Callable[[list[dict[str, str]]], Awaitable[str]]
"""Asks the run's model chat messages and returns its answer's text (raises on failure)."""


class RewriteError(ValueError):
    """A model's rewrite of a prompt variant cannot be used; the message says what was wrong.
    The caller falls back to the bank."""


@dataclass
class _Arm:
    variant: PromptVariant
    evaluated: int = 0
    improved: int = 0

    @property
    def mean(self) -> float:
        return (1 + self.improved) / (2 + self.evaluated)


class PromptEvolution:
    """A run's prompt variants: which one asks the next candidate, and when a new one is made.

    Lifecycle: :meth:`start` once per session; per candidate :meth:`choose` (the variant's
    ``templates`` go into the proposal request, its ``id`` into ``Program.prompt_variant``);
    per stored child :meth:`record_child`; after each committed evaluation
    :meth:`maybe_evolve`.

    Args:
        every: evaluations between two new variants (``SearchConfig.prompt_variant_every``).
    """

    def __init__(self, every: int = 40) -> None:
        if every < 1:
            raise ValueError(f"prompt_variant_every must be at least 1, not {every}")
        self.every = every
        self.run_id: str | None = None
        self._arms: dict[str, _Arm] = {}
        self._next_due = every
        self.successes: deque[str] = deque(maxlen=_RECENT)
        self.failures: deque[str] = deque(maxlen=_RECENT)

    # --- state ------------------------------------------------------------------------------

    @property
    def variants(self) -> list[PromptVariant]:
        """The run's variants, oldest first."""
        return [arm.variant for arm in self._arms.values()]

    def counts(self, variant_id: str) -> tuple[int, int]:
        """``(evaluated, improved)`` children of a variant, as the bandit sees them."""
        arm = self._arm(variant_id)
        return arm.evaluated, arm.improved

    def start(
        self, archive: Archive, run_id: str, problem: Problem, prompts: PromptConfig | None = None
    ) -> None:
        """Load the run's variants and their children's counts; store the ``default`` variant
        (the problem's templates, as ``prompts`` overrides them) when the run has none.

        Raises:
            PromptTemplateError: the problem's templates are malformed.
        """
        self.run_id = run_id
        variants = archive.prompt_variants(run_id)
        if not variants:
            templates = load_templates(problem, prompts)
            default = PromptVariant.make(
                run_id,
                {name: templates[name] for name in VARIED},
                origin="default",
                note="the problem's own templates",
            )
            archive.add_prompt_variant(default)
            variants = [default]
        self._arms = {v.id: _Arm(v) for v in variants}
        for stats in archive.prompt_variant_stats(run_id):
            arm = self._arms[stats.variant_id]
            arm.evaluated, arm.improved = stats.evaluated, stats.improved
        # Variants after the first were made every `every` evaluations: the next one is due
        # after as many as made so far, plus one (derived, so a resume does not re-trigger).
        self._next_due = len(variants) * self.every

    def choose(self, rng: np.random.Generator) -> PromptVariant:
        """The variant for the next candidate: Thompson sampling on each variant's
        Beta(1 + improved, 1 + evaluated - improved); ties go to the older variant.

        Raises:
            RuntimeError: called before :meth:`start`.
        """
        arms = self._started()
        draws = rng.beta(
            [1 + a.improved for a in arms], [1 + a.evaluated - a.improved for a in arms]
        )
        return arms[int(np.argmax(draws))].variant

    def record(self, variant_id: str, *, improved: bool, evaluated: bool) -> None:
        """Count one child of ``variant_id`` (an improvement counts only when evaluated)."""
        arm = self._arm(variant_id)
        arm.evaluated += bool(evaluated)
        arm.improved += bool(evaluated and improved)

    def record_child(self, program: Program, parent_score: float | None) -> None:
        """Count a stored child by its ``prompt_variant`` (nothing for one without) and keep a
        line about it for the next rewrite's recent successes or failures."""
        if program.prompt_variant is None or program.prompt_variant not in self._arms:
            return
        better = improved(program.score, parent_score)
        self.record(program.prompt_variant, improved=better, evaluated=program.status.evaluated)
        (self.successes if better else self.failures).append(_summary(program, parent_score))

    def best(self) -> PromptVariant:
        """The variant with the highest posterior mean improvement rate among those with
        :data:`MIN_EVIDENCE` evaluated children; before any has, the most tried one (the
        default at a run's start). Ties go to the older variant."""
        arms = self._started()
        proven = [a for a in arms if a.evaluated >= MIN_EVIDENCE]
        if proven:
            return max(proven, key=lambda a: a.mean).variant
        return max(arms, key=lambda a: a.evaluated).variant

    def due(self, evaluations: int) -> bool:
        """Whether a new variant is due at ``evaluations`` (every ``every`` of them)."""
        return evaluations >= self._next_due

    # --- new variants -----------------------------------------------------------------------

    async def maybe_evolve(
        self,
        archive: Archive,
        *,
        evaluations: int,
        seq: int,
        rng: np.random.Generator,
        ask: Ask | None = None,
    ) -> PromptVariant | None:
        """When a variant is due, make one, store it and return it (else None).

        Args:
            archive: where the variant is stored.
            evaluations: the run's evaluations so far.
            seq: the attempt just committed (the variant's ``seq``).
            rng: draws of the bank (seeded: reproducible).
            ask: asks the run's model (see :data:`Ask`); None with the offline model, which
                cannot write prompts: the bank is used directly. A failed call or an unusable
                answer falls back to the bank too (logged).
        """
        if not self.due(evaluations):
            return None
        self._next_due = evaluations + self.every  # before awaiting: one variant per turn
        best = self.best()
        variant: PromptVariant | None = None
        if ask is not None:
            try:
                text = await ask(
                    self.rewrite_messages(best, list(self.successes), list(self.failures))
                )
                # a thinking model's drafts are not the rewrite
                variant = self.parse_rewrite(without_reasoning(text), best, seq)
                if variant.id in self._arms:
                    raise RewriteError("the rewrite is a variant the run already has")
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("prompt variant: the model's rewrite is not usable (%s); "
                            "using the built-in bank instead", exc)  # fmt: skip
                variant = None
        if variant is None:
            variant = self.offline_variant(rng, seq)
        return variant if self.adopt(archive, variant) else None

    def adopt(self, archive: Archive, variant: PromptVariant) -> bool:
        """Store ``variant`` and make it a choice; False (nothing changes) when the run
        already has it."""
        if variant.id in self._arms or not archive.add_prompt_variant(variant):
            return False
        self._arms[variant.id] = _Arm(variant)
        return True

    def offline_variant(self, rng: np.random.Generator, seq: int) -> PromptVariant:
        """A new variant without a model: the best one with a bank fragment added to its task
        instructions (keeping at most one fragment it had; origin ``bank``), or, once two
        variants have :data:`MIN_EVIDENCE`, one time in three the system message of one
        with the task instructions of the other (``recombination``). Draws again when the
        result is a variant the run has (the last draw is returned if all are)."""
        best = self.best()
        proven = [a.variant for a in self._started() if a.evaluated >= MIN_EVIDENCE]
        others = [v for v in proven if v.id != best.id]
        candidate = best
        for _ in range(_TRIES):
            if others and rng.random() < 1 / 3:
                candidate = _recombine(best, others[int(rng.integers(len(others)))], rng, seq)
            else:
                candidate = _with_fragment(best, rng, seq)
            if candidate.id not in self._arms:
                break
        return candidate

    def rewrite_messages(
        self,
        best: PromptVariant,
        recent_successes: Sequence[str] = (),
        recent_failures: Sequence[str] = (),
    ) -> list[dict[str, str]]:
        """Chat messages asking a model to rewrite ``best``'s system message and task
        instructions (diff mode), in view of the run's recent successes and failures."""
        evaluated, better = self.counts(best.id) if best.id in self._arms else (0, 0)
        rate = f"{better} of {evaluated} evaluated children improved on their parent"
        placeholders = ", ".join(f"${p}" for p in sorted(PLACEHOLDERS))
        parts = [
            "A program-evolution engine asks a coding model, many times, for one change to a "
            "program that improves a score. Below are the system message and the task "
            f"instructions it uses now ({rate}). Rewrite them so that more changes improve "
            "the score: make the strategy sharper, drawing on what worked and what failed.",
            f"## Current system message\n{_fence(best.templates.get('system', ''), 'system')}",
            f"## Current task instructions\n{_fence(best.templates.get('task_diff', ''), 'task')}",
            "## Recent successes\n" + _bullets(recent_successes),
            "## Recent failures\n" + _bullets(recent_failures),
            "## Rules\n"
            f"- The texts are Python string.Template templates: you may use {placeholders} "
            "and no other $name; write $$ for a literal dollar sign.\n"
            "- Do not describe the answer format (SEARCH/REPLACE blocks): it is added "
            "separately. Do not mention these rules.\n"
            f"- Each text at most {MAX_SECTION_CHARS} characters.",
            "## Answer format\nOne sentence saying what you changed and why, then exactly two "
            "fenced blocks, the first tagged system and the second tagged task:\n\n"
            "```system\nthe new system message\n```\n\n```task\nthe new task instructions\n```",
        ]
        return [
            {
                "role": "system",
                "content": "You are an expert in prompting coding models for automated "
                "program search.",
            },
            {"role": "user", "content": "\n\n".join(parts) + "\n"},
        ]

    def parse_rewrite(self, text: str, best: PromptVariant, seq: int) -> PromptVariant:
        """The variant a model's rewrite answer describes (origin ``model``, derived from
        ``best``): its ``system`` section becomes the system message, its ``task`` section the
        diff-mode task; ``best``'s other templates are kept.

        Raises:
            RewriteError: the answer lacks a section, repeats or misnames one, leaves one
                empty or too long, breaks the template rules, or changes nothing.
        """
        run_id = self._started()[0].variant.run_id
        sections: dict[str, str] = {}
        for match in _FENCE.finditer(text):
            name, body = match.group(2), match.group(3).strip()
            if name not in SECTIONS:
                raise RewriteError(
                    f"a fenced block is tagged {name!r}; expected exactly two, tagged "
                    "'system' and 'task'"
                )
            if name in sections:
                raise RewriteError(f"the answer has two fenced blocks tagged {name!r}")
            if not body:
                raise RewriteError(f"the {name!r} block is empty")
            if len(body) > MAX_SECTION_CHARS:
                raise RewriteError(
                    f"the {name!r} block has {len(body)} characters; at most "
                    f"{MAX_SECTION_CHARS} are allowed"
                )
            sections[name] = body
        missing = [s for s in SECTIONS if s not in sections]
        if missing:
            raise RewriteError(
                f"the answer has no fenced block tagged {' or '.join(map(repr, missing))}; "
                "expected ```system ...``` and ```task ...```"
            )
        templates = dict(best.templates)
        templates.update({SECTIONS[name]: body for name, body in sections.items()})
        try:
            check_templates(templates, lambda name: f"the rewritten {name!r} template")
        except PromptTemplateError as exc:
            raise RewriteError(str(exc)) from None
        note = _FENCE.sub("", text).strip().split("\n", 1)[0].strip()[:200]
        variant = PromptVariant.make(
            run_id, templates, origin="model", parent_id=best.id, seq=seq,
            note=note or "rewritten by the model",
        )  # fmt: skip
        if variant.id == best.id:
            raise RewriteError("the rewrite is identical to the variant it rewrites")
        return variant

    # --- internals ----------------------------------------------------------------------------

    def _started(self) -> list[_Arm]:
        if not self._arms:
            raise RuntimeError("PromptEvolution.start() must be called before it is used")
        return list(self._arms.values())

    def _arm(self, variant_id: str) -> _Arm:
        self._started()
        try:
            return self._arms[variant_id]
        except KeyError:
            raise KeyError(
                f"prompt variant {variant_id!r} is not a variant of run {self.run_id!r}; "
                "record only children of variants from choose()"
            ) from None


def _with_fragment(best: PromptVariant, rng: np.random.Generator, seq: int) -> PromptVariant:
    """``best`` with a new bank fragment in its focused task templates (one old one kept at
    most, chosen at random)."""
    _, had = _split_focus(best.templates.get("task_diff", ""))
    fresh = [f for f in FRAGMENTS if f not in had]
    new = fresh[int(rng.integers(len(fresh)))]
    kept = [had[int(rng.integers(len(had)))]] if had and rng.random() < 0.5 else []
    focus = [*kept, new]
    templates = dict(best.templates)
    for name in FOCUSED:
        if name in templates:
            text, _ = _split_focus(templates[name])
            templates[name] = text + "\n\n" + "\n".join(FOCUS + f for f in focus)
    return PromptVariant.make(
        best.run_id, templates, origin="bank", parent_id=best.id, seq=seq,
        note=f"focus: {new}" + (f" (kept: {kept[0]})" if kept else ""),
    )  # fmt: skip


def _recombine(
    best: PromptVariant, other: PromptVariant, rng: np.random.Generator, seq: int
) -> PromptVariant:
    """The system message of one of two variants with the task templates of the other."""
    first, second = (best, other) if rng.random() < 0.5 else (other, best)
    templates = {**second.templates, "system": first.templates.get("system", "")}
    return PromptVariant.make(
        best.run_id, templates, origin="recombination", parent_id=best.id, seq=seq,
        note=f"system message of {first.id}, task instructions of {second.id}",
    )  # fmt: skip


def _split_focus(text: str) -> tuple[str, list[str]]:
    """A task template's text without its trailing ``Focus:`` lines, and those fragments."""
    lines = text.rstrip().split("\n")
    focus: list[str] = []
    while lines and lines[-1].startswith(FOCUS):
        focus.insert(0, lines.pop()[len(FOCUS) :])
    return "\n".join(lines).rstrip(), focus


def _summary(program: Program, parent_score: float | None) -> str:
    """One line about a child for the rewriting model: what it did and what came of it."""
    parent = "none" if parent_score is None else f"{parent_score:.6g}"
    head = f"seq {program.seq} ({program.edit_kind})"
    if program.score is not None:
        outcome = f"score {parent} -> {program.score:.6g}"
    else:
        error = (program.artifacts.get("error") or "").strip().split("\n")[-1]
        outcome = f"{program.status}" + (f": {error}" if error else "")
    said = _first_prose_line(program.edit or "")
    line = f"{head}: {outcome}" + (f"; the model said: {said}" if said else "")
    return line[:_SUMMARY_CHARS]


def _first_prose_line(answer: str) -> str:
    for line in answer.split("\n"):
        line = line.strip()
        if line and not line.startswith(("<<<<<<<", "```", "=======", ">>>>>>>")):
            return line[:160]
        if line.startswith(("<<<<<<<", "```")):
            return ""
    return ""


def _fence(text: str, tag: str) -> str:
    return f"```{tag}\n{text.strip()}\n```"


def _bullets(lines: Sequence[str]) -> str:
    return "\n".join(f"- {line}" for line in lines) if lines else "(none yet)"


def templates_of(variant: PromptVariant | None) -> Mapping[str, str]:
    """A variant's template overrides for a :class:`~evoforge.evolve.proposals.ProposalRequest`
    (a plain dict, which pickles; empty for no variant)."""
    return {} if variant is None else dict(variant.templates)
