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

from evoforge.evolve.proposals._executor import CoroutineTrackingExecutor
from evoforge.evolve.proposals._messages import (
    Answer,
    CallFailure,
    Proposal,
    ProposalRequest,
    ProposalSetup,
    Question,
    without_answers,
)
from evoforge.evolve.proposals._pool import (
    MAX_RESTARTS,
    LocalProposer,
    PoolStats,
    ProposalError,
    ProposalPool,
    default_processes,
    in_process_providers,
)
from evoforge.evolve.proposals._propose import EMPTY_ANSWER, ask, propose
from evoforge.evolve.proposals._window import (
    CHARS_PER_TOKEN,
    MIN_ANSWER_TOKENS,
    OLLAMA_WINDOW,
    ContextWindow,
    Fitted,
    PromptTooLarge,
    context_window,
    count_tokens,
    fit_messages,
    litellm_window,
    margin_tokens,
    num_ctx,
)
from evoforge.evolve.proposals._worker import WorkerStats

__all__ = [
    # messages
    "CallFailure",
    "Proposal",
    "ProposalRequest",
    "ProposalSetup",
    "Question",
    "Answer",
    "without_answers",
    # making one
    "EMPTY_ANSWER",
    "propose",
    "ask",
    # the model's context window
    "CHARS_PER_TOKEN",
    "MIN_ANSWER_TOKENS",
    "OLLAMA_WINDOW",
    "ContextWindow",
    "Fitted",
    "PromptTooLarge",
    "context_window",
    "count_tokens",
    "fit_messages",
    "litellm_window",
    "margin_tokens",
    "num_ctx",
    # where they are made
    "MAX_RESTARTS",
    "LocalProposer",
    "PoolStats",
    "ProposalError",
    "ProposalPool",
    "WorkerStats",
    "default_processes",
    "in_process_providers",
    # worker internals shared with tests
    "CoroutineTrackingExecutor",
]
