"""Proposals: prompt, model call, answer parsing, edit and syntax check, off the controller's loop.

The controller keeps selection, the archive and the islands; for each candidate it sends a
:class:`ProposalRequest` (the prompt context it read, the model, the candidate's seeds) to a
pool of worker processes (:class:`ProposalPool`, ``--proposal-workers``) and gets a
:class:`Proposal` back (the answer and the child, or why there is none); a plain
:class:`Question` (e.g. rewriting a prompt variant) gets an :class:`Answer`. litellm's
per-call CPU (milliseconds) then runs on other cores, not on the loop that commits results. A
prompt is kept within the model's context window where one is known (:class:`ContextWindow`).
See :mod:`evoforge.evolve.proposals._worker` for the protocol and how a worker stops cleanly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evolve.proposals._calibration import (
        restore_calibration as restore_calibration,
        stored_calibration as stored_calibration,
    )
    from evoforge.evolve.proposals._executor import (
        CoroutineTrackingExecutor as CoroutineTrackingExecutor,
    )
    from evoforge.evolve.proposals._messages import (
        Answer as Answer,
        CallFailure as CallFailure,
        Proposal as Proposal,
        ProposalRequest as ProposalRequest,
        ProposalSetup as ProposalSetup,
        Question as Question,
        without_answers as without_answers,
    )
    from evoforge.evolve.proposals._pool import (
        MAX_RESTARTS as MAX_RESTARTS,
        LocalProposer as LocalProposer,
        PoolStats as PoolStats,
        ProposalError as ProposalError,
        ProposalPool as ProposalPool,
        default_processes as default_processes,
        in_process_providers as in_process_providers,
    )
    from evoforge.evolve.proposals._propose import (
        EMPTY_ANSWER as EMPTY_ANSWER,
        apply_checked as apply_checked,
        ask as ask,
        propose as propose,
    )
    from evoforge.evolve.proposals._window import (
        CHARS_PER_TOKEN as CHARS_PER_TOKEN,
        MIN_ANSWER_TOKENS as MIN_ANSWER_TOKENS,
        OLLAMA_WINDOW as OLLAMA_WINDOW,
        ContextWindow as ContextWindow,
        Fitted as Fitted,
        PromptTooLarge as PromptTooLarge,
        context_window as context_window,
        count_tokens as count_tokens,
        fit_messages as fit_messages,
        litellm_window as litellm_window,
        margin_tokens as margin_tokens,
        num_ctx as num_ctx,
    )
    from evoforge.evolve.proposals._worker import WorkerStats as WorkerStats

__getattr__, __dir__, __all__ = lazy_package(__name__)
