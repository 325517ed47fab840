"""One proposal: prompt, model call, answer applied to the parent, syntax and name checks of
the child; and one plain question (:func:`ask`), asked the same way.

The prompt is kept within the model's context window where it is known, counted in the
server's tokens (:mod:`evoforge.evolve.proposals._call`); one that cannot fit fails as a model
call would.

The same function serves a worker process and the in-process fallback, so both behave alike.
Everything it draws at random comes from the request's seeds: the same request gives the same
proposal wherever it runs (what keeps a one-slot run reproducible).
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

import numpy as np

from evoforge.evolve.checks import check_program_names, check_program_syntax
from evoforge.evolve.edits import AppliedEdit, EditError, apply_edit, each_block_alone
from evoforge.evolve.models import Attempt, Completion, ModelError, complete
from evoforge.evolve.prompts import build_messages
from evoforge.evolve.proposals._call import call_fitted
from evoforge.evolve.proposals._messages import (
    Answer,
    CallFailure,
    Proposal,
    ProposalRequest,
    ProposalSetup,
    Question,
)
from evoforge.islands import fingerprint

if TYPE_CHECKING:
    from evoforge.archive import Program

EMPTY_ANSWER = "the model's answer was empty: there is no edit to apply"


async def propose(setup: ProposalSetup, request: ProposalRequest) -> Proposal:
    """Build the prompt of ``request``, ask its model, apply the answer and check the child.

    A failed call is a :class:`Proposal` with ``failure``, and so is a prompt that cannot fit
    the model's context window (kind ``bad_request``, not sent); an empty answer is a completion
    with an ``edit_error`` (the model answered: an attempt to store, not an outage), and so is
    a Python child that reads a name defined nowhere or drops a function its evaluator calls
    (:func:`~evoforge.evolve.checks._names.check_program_names`: it could only fail with NameError).

    Raises:
        PromptTemplateError, BlockError: the problem's templates or the parent's EVOLVE-BLOCK
            markers are broken (a problem bug, not a model mistake).
    """
    spec = request.spec
    called = await call_fitted(
        setup,
        spec,
        lambda limit: build_messages(
            setup.problem, request.context, setup.prompts, request.templates, limit=limit
        ),
        seed=request.model_seed,
        jitter_seed=request.jitter_seed,
    )
    prompt_cpu = called.prompt_cpu_s
    if called.error is not None:
        exc = called.error
        if exc.kind != "empty":
            return Proposal(request.seq, failure=CallFailure.of(exc), prompt_cpu_s=prompt_cpu)
        *retried, last = exc.attempts or (Attempt("empty", str(exc), 0.0),)
        completion = Completion("", spec.model, last.latency_s, attempts=tuple(retried))
        why = last.message.partition("answered with no text")[2].lstrip(",:; ")
    else:
        assert called.completion is not None
        completion, why = called.completion, ""
    tick = time.thread_time()
    parent = request.context.parent
    try:
        if not completion.text.strip():  # why, when the reply said (a reasoning model cut off)
            raise EditError(f"the model's answer was empty: {why}" if why else EMPTY_ANSWER)
        child = apply_checked(setup, parent, completion.text)
        syntax = child.problem  # check_program_syntax's answer (apply_edit ran it)
        parts: tuple[str, ...] = ()
        if syntax is None and setup.split_edits and child.n_blocks > 1:
            feedback = _feedback(parent)
            parts = _parts(setup, parent.source or "", completion.text, child.source, feedback)
    except EditError as exc:
        return Proposal(
            request.seq,
            completion,
            edit_error=str(exc),
            prompt_cpu_s=prompt_cpu,
            edit_cpu_s=time.thread_time() - tick,
        )
    return Proposal(
        request.seq,
        completion,
        child=child,
        syntax_error=syntax,
        fingerprint=fingerprint(child.source, setup.problem.language),
        prompt_cpu_s=prompt_cpu,
        edit_cpu_s=time.thread_time() - tick,
        parts=parts,
    )


def apply_checked(setup: ProposalSetup, parent: Program, answer: str) -> AppliedEdit:
    """``answer`` applied to ``parent`` under the session's matching rules, and checked: the
    child's :attr:`~evoforge.evolve.edits.AppliedEdit.problem` holds the syntax check's answer.

    Other languages (an OpenEvolve folder's C or Rust program) are checked by their evaluator;
    a repository bundle's Python files are checked one by one. A Python child that parses but
    can only die with NameError is refused here, before any evaluation.

    Raises:
        EditError: the answer is unusable, or the child reads a name defined nowhere or drops
            a function its evaluator calls.
    """
    language = setup.problem.language
    child = apply_edit(
        parent.source or "",
        answer,
        tolerant=setup.edit_matching == "tolerant",
        fuzzy_threshold=setup.fuzzy_threshold,
        check=functools.partial(check_program_syntax, language=language),
        language=language,
    )
    if child.problem is None:
        names = check_program_names(
            child.source, parent.source or "", setup.problem, parent_feedback=_feedback(parent)
        )
        if names is not None:
            raise EditError(names)
    return child


def _feedback(parent: Program) -> str:
    """What the parent's evaluation said: a name it reports missing is no new mistake."""
    return "\n".join(str(text) for text in parent.artifacts.values())


def _parts(
    setup: ProposalSetup, parent: str, answer: str, child: str, feedback: str
) -> tuple[str, ...]:
    """The children each block of ``answer`` makes alone, as far as they pass the checks the
    whole child passed (a block that calls what another block defines does not)."""
    language = setup.problem.language
    parts: list[str] = []
    for part in each_block_alone(
        parent,
        answer,
        tolerant=setup.edit_matching == "tolerant",
        fuzzy_threshold=setup.fuzzy_threshold,
        language=language,
    ):
        if part == child or check_program_syntax(part, language=language) is not None:
            continue
        if check_program_names(part, parent, setup.problem, parent_feedback=feedback) is None:
            parts.append(part)
            if len(parts) == setup.split_edits:
                break
    return tuple(parts)


async def ask(setup: ProposalSetup, question: Question) -> Answer:
    """Ask ``question``'s model its messages with the session's sampling and retry settings.

    A failed call (an empty answer included) is an :class:`Answer` with ``failure``; nothing
    raises for a model's fault.
    """
    try:
        completion = await complete(
            question.spec,
            [dict(m) for m in question.messages],
            seed=question.model_seed,
            temperature=setup.temperature,
            max_tokens=setup.max_tokens,
            policy=setup.retry,
            rng=np.random.default_rng(list(question.jitter_seed)),
        )
    except ModelError as exc:
        return Answer(question.seq, failure=CallFailure.of(exc))
    return Answer(question.seq, completion)
