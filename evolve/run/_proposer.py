"""Where a run's proposals are made: worker processes, or this process when a model's provider
plugin lives here only."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from evoforge.evolve.proposals import (
    Answer,
    LocalProposer,
    PoolStats,
    Proposal,
    ProposalPool,
    ProposalRequest,
    ProposalSetup,
    Question,
    in_process_providers,
)

if TYPE_CHECKING:
    from evoforge.evolve.config import RunConfig
    from evoforge.problems import Problem

log = logging.getLogger("evoforge")


class Proposer(Protocol):
    """Where proposals are made: :class:`~evoforge.evolve.proposals.ProposalPool` (worker
    processes) or :class:`~evoforge.evolve.proposals.LocalProposer` (this process)."""

    stats: PoolStats

    async def start(self) -> None: ...

    async def wait_ready(self) -> None: ...

    async def propose(self, request: ProposalRequest) -> Proposal: ...

    async def ask(self, question: Question) -> Answer: ...

    async def close(self) -> PoolStats: ...


def proposal_setup(problem: Problem, config: RunConfig) -> ProposalSetup:
    """What every proposal of a session of ``config`` shares (also how the controller applies
    an answer again: :func:`~evoforge.evolve.proposals.apply_checked`)."""
    return ProposalSetup(
        problem=problem,
        prompts=config.prompts,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        retry=config.retry,
        edit_matching=config.search.edit_matching,
        fuzzy_threshold=config.search.fuzzy_threshold,
        split_edits=config.search.split_edits,
        models=tuple(dict.fromkeys(s.model for s in config.ensemble_specs)),
    )


def make_proposer(problem: Problem, config: RunConfig) -> Proposer:
    """Proposal worker processes for ``config``'s models, or this process when a model's
    provider plugin was registered here only (a worker could not load it)."""
    setup = proposal_setup(problem, config)
    local = in_process_providers(setup.models)
    if local:
        log.warning(
            "model provider %s is a plugin registered in this process only (pm.register), "
            "which proposal worker processes cannot load: proposals run in this process",
            ", ".join(repr(p) for p in local),
        )
        return LocalProposer(setup)
    return ProposalPool(setup, config.proposal_processes)
