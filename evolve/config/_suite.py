"""How a suite spends its one budget across its tasks (``[suite]`` in a run configuration)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from evoforge.base.settings import Settings

Allocation = Literal["bandit", "equal"]
"""``bandit``: grants go where recent improvement is (see :class:`SuiteConfig`); ``equal``:
every task gets the same share of the budget."""


class SuiteConfig(Settings):
    """How ``evoforge run SUITE --budget N`` spends N evaluations across the suite's tasks
    (``[suite]``; ``--budget-per-task`` runs each task on its own budget instead).

    Attributes:
        allocation: ``equal`` (the default: on ``pie_suite`` the bandit did no better, see
            ``bench/suite_allocation.py``): every task gets the budget divided equally (what
            an equal split of one budget gives, concurrently); ``bandit``: every task first
            gets ``floor`` evaluations, then grants of ``grant`` evaluations go, one decision
            at a time, to the task with the highest sliding-window UCB index on its recent
            improvement per evaluation (see :mod:`evoforge.evolve.run`).
        floor: (``bandit``) evaluations every task gets before the bandit decides anything
            (its seed and a few children: the first improvement rate).
        grant: evaluations per bandit decision.
        window: the bandit's window, in grants: a task's recent rate is its gain over its
            last ``window`` grants per evaluation (older gains say little about the next:
            a task's gains shrink as it is evolved).
        exploration: weight of the UCB bonus (0: greedy on the recent rate).
        concurrency: tasks holding a grant at once (None: as many as ``workers``, at most the
            tasks). Every task's evaluations share the run's ``workers`` evaluation slots.
        open_tasks: tasks whose session (proposal workers, evaluator processes) stays open
            between grants; past it, the task granted least recently is paused and reopened
            when it is granted again.
        transfer: cross-task transfer: a task's prompt may offer, as an inspiration labelled
            as another task's, the best program of a related task (one of the same declared
            ``family``, or whose seed's code is similar: token-shingle Jaccard similarity of
            at least ``transfer_similarity``). Each child records whether its prompt had one
            (``evoforge stats`` compares the two improvement rates).
        transfer_rate: the share of a task's prompts that offer one (when a related task has
            improved on its seed).
        transfer_similarity: the least seed similarity that relates two tasks of no family.
    """

    section: ClassVar[str] = "suite"

    allocation: Allocation = "equal"
    floor: Annotated[int, Field(ge=1)] = 8
    grant: Annotated[int, Field(ge=1)] = 10
    window: Annotated[int, Field(ge=1)] = 3
    exploration: Annotated[float, Field(ge=0)] = 0.5
    concurrency: Annotated[int, Field(ge=1)] | None = None
    open_tasks: Annotated[int, Field(ge=1)] = 8
    transfer: bool = False
    transfer_rate: Annotated[float, Field(ge=0, le=1)] = 0.5
    transfer_similarity: Annotated[float, Field(gt=0, le=1)] = 0.3
