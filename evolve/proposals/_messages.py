"""What the controller and a proposal worker say to each other: small, plain, picklable values.

A worker gets one :class:`ProposalSetup` when it starts, then a :class:`ProposalRequest` per
candidate: the prompt context the controller read from the archive (the parent, its feedback,
a second parent, the run's best, recent failures), the model to call and the candidate's
random seeds. It answers with a :class:`Proposal`: the model's answer and what came of it
(the child's source, or why there is none). Programs travel without their stored model answer
(``Program.edit``, up to 200 kB each, never shown in a prompt), so a request is a few kB to a
few tens of kB: the size of the prompt it becomes.

A :class:`Question` asks a model a plain question through the same workers (no edit is
applied: e.g. rewriting a prompt variant) and gets an :class:`Answer` back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evoforge.evolve.models import Attempt, Completion, ModelError

if TYPE_CHECKING:
    from evoforge.archive import Program
    from evoforge.evolve.edits import AppliedEdit
    from evoforge.evolve.models import ModelSpec, RetryPolicy
    from evoforge.evolve.prompts import PromptConfig, PromptContext
    from evoforge.islands import Fingerprint
    from evoforge.problems import Problem


@dataclass(frozen=True)
class ProposalSetup:
    """What every proposal of a session shares; sent once to each worker.

    Attributes:
        problem: the problem as this session scores it (its templates and objectives).
        prompts: the run's prompt settings.
        temperature, max_tokens: the run's sampling settings (a model's own win).
        retry: retries of one model call.
        models: model strings to set up before the first request (imports litellm).
        edit_matching: ``"tolerant"`` or ``"exact"``: how answers' SEARCH texts are located
            (``[search] edit_matching``; see :func:`evoforge.evolve.edits.apply_edit`).
        fuzzy_threshold: least similarity for the fuzzy rule (``[search] fuzzy_threshold``).
        split_edits: most single-block children of a multi-block diff to offer the run,
            should the whole edit score below its parent (``[search] split_edits``; 0: none).
    """

    problem: Problem
    prompts: PromptConfig
    temperature: float
    max_tokens: int
    retry: RetryPolicy
    models: tuple[str, ...]
    edit_matching: str = "tolerant"
    fuzzy_threshold: float = 0.9
    split_edits: int = 0

    def __post_init__(self) -> None:
        if self.edit_matching not in ("tolerant", "exact"):
            raise ValueError(
                f"edit_matching must be 'tolerant' or 'exact', got {self.edit_matching!r}"
            )


@dataclass(frozen=True)
class ProposalRequest:
    """One candidate's proposal: build its prompt, call the model, apply and check the answer.

    Attributes:
        seq: the candidate's number (the answer is matched to it).
        context: what the prompt shows (see :class:`~evoforge.evolve.prompts.PromptContext`).
        spec: the model to call.
        model_seed: passed to the model.
        jitter_seed: seeds the generator of the retry backoff's jitter.
        templates: template overrides of the candidate's prompt variant (empty: the
            problem's own templates). A plain dict: a ``MappingProxyType`` does not pickle.
    """

    seq: int
    context: PromptContext
    spec: ModelSpec
    model_seed: int
    jitter_seed: tuple[int, ...]
    templates: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Question:
    """A plain question to a model: its answer comes back as text, nothing is applied.

    Attributes:
        seq: a number that identifies the question among the session's questions (its own
            numbering: a question and a proposal may share one).
        messages: the chat messages, as ``({"role": ..., "content": ...}, ...)``.
        spec: the model to ask.
        model_seed: passed to the model.
        jitter_seed: seeds the generator of the retry backoff's jitter.
    """

    seq: int
    messages: tuple[Mapping[str, str], ...]
    spec: ModelSpec
    model_seed: int
    jitter_seed: tuple[int, ...]


@dataclass(frozen=True)
class Answer:
    """What a :class:`Question` came to: exactly one of ``completion`` and ``failure``.

    Attributes:
        seq: the question's number.
        completion: the model's answer and its accounting (tokens, cost, attempts).
        failure: why the call failed after its retries (an empty answer included).
    """

    seq: int
    completion: Completion | None = None
    failure: CallFailure | None = None


@dataclass(frozen=True)
class CallFailure:
    """A model call that failed after its retries (a :class:`ModelError` as plain data:
    exceptions with keyword-only fields do not survive pickling)."""

    message: str
    kind: str
    latency_s: float
    attempts: tuple[Attempt, ...]

    @classmethod
    def of(cls, error: ModelError) -> CallFailure:
        return cls(str(error), error.kind, error.latency_s, tuple(error.attempts))

    def error(self) -> ModelError:
        return ModelError(self.message, self.latency_s, kind=self.kind, attempts=self.attempts)


@dataclass(frozen=True)
class Proposal:
    """What one request came to. Exactly one of these holds: ``failure`` (the call failed),
    ``edit_error`` (the answer could not be applied; an empty answer included), or ``child``
    (with ``syntax_error`` None when the child parses).

    Attributes:
        seq: the request's candidate number.
        completion: the model's answer and its accounting (None when the call failed).
        failure: why the call failed.
        child: the child program.
        edit_error: why the answer could not be applied.
        syntax_error: where the child does not parse.
        prompt_cpu_s: CPU seconds building the prompt took.
        edit_cpu_s: CPU seconds applying the answer and checking the child's syntax took.
        fingerprint: the child's equivalence key and shingles (for the novelty filter and
            the built-in descriptors), made here so the controller's loop need not.
        parts: for a diff of several blocks, the children each block makes alone that pass
            the syntax and name checks (at most ``split_edits``): what the run evaluates if
            the whole edit scores below its parent.
    """

    seq: int
    completion: Completion | None = None
    failure: CallFailure | None = None
    child: AppliedEdit | None = None
    edit_error: str | None = None
    syntax_error: str | None = None
    prompt_cpu_s: float = 0.0
    edit_cpu_s: float = 0.0
    fingerprint: Fingerprint | None = None
    parts: tuple[str, ...] = ()


def without_answers(context: PromptContext) -> PromptContext:
    """``context`` with every program's stored model answer left out (prompts never show it)."""

    def bare(program: Program) -> Program:
        return program if program.edit is None else dataclasses.replace(program, edit=None)

    return dataclasses.replace(
        context,
        parent=bare(context.parent),
        second_parent=None if context.second_parent is None else bare(context.second_parent),
        inspirations=tuple(map(bare, context.inspirations)),
        top_programs=tuple(map(bare, context.top_programs)),
        lineage_failures=tuple(
            dataclasses.replace(f, program=bare(f.program)) for f in context.lineage_failures
        ),
        foreign=tuple(dataclasses.replace(f, program=bare(f.program)) for f in context.foreign),
    )
