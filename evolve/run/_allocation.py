"""How a suite's one budget is allocated to its tasks: the decisions alone, no I/O.

A task's **gain** is the log-ratio of its best score to its seed's
(:func:`~evoforge.evolve.mining.gain_of`): for a
time or an instruction count it is ``log(speedup over the seed)``, so the mean gain over the
tasks is the log of the geometric-mean speedup the suite reports. An allocation that spends
each next evaluation where it buys the most gain maximises that figure.

Policies (``[suite] allocation``):

``bandit`` — a **sliding-window UCB** (Garivier & Moulines, 2011) on each task's recent gain
per evaluation. Every task first gets ``floor`` evaluations; then each decision grants
``grant`` evaluations to the idle task with the highest index::

    index = recent rate + exploration * scale * sqrt(ln(evaluations spent by all) / its own)

where the recent rate is its gain over its last ``window`` grants per evaluation and
``scale`` the best whole-history rate of any task (so the bonus is in the rewards' units).
Why this one: a task's gains shrink as it is evolved (a *rotting*, rested bandit), so a rate
over all of a task's history (UCB1) keeps paying a task for gains it made long ago, and the
window is what rotting-bandit algorithms use (Levine et al., 2017; Seznec et al., 2019). The
bonus brings back a task that has been starved: improvement in program evolution comes in
jumps, so one empty window is weak evidence. Successive halving (Hyperband) was not chosen:
it identifies the best arm and drops the others for good, while the suite's figure is a sum
over every task. When no task has gained anything yet the bonus alone decides: the least
evaluated task goes first (round robin).

``equal`` — every task gets ``budget / tasks`` (the first ``budget % tasks`` one more), in
one grant: an equal split of the same budget, run concurrently. Evaluations a task gave back
(it ended early) go to the task with the smallest cap, ``grant`` at a time.

Ties go to the task with fewer evaluations spent, then to the earlier task.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from evoforge.evolve.config import SuiteConfig


@dataclass
class Arm:
    """One task as the allocation sees it.

    Attributes:
        ord: its place in the suite.
        name: its problem's name (for messages).
        cap: evaluations granted so far.
        spent: evaluations it has spent.
        gain: its gain now (see :func:`gain_of`).
        seed_score: its seed's score, once evaluated (for :func:`gain_of`).
        points: ``(spent, gain)`` at each of its grants, in order.
        live: it may be granted more (False once it ended by itself: a failed seed, a
            failure streak, its own wall-time budget).
        busy: it holds a grant it has not finished.
    """

    ord: int
    name: str
    cap: int = 0
    spent: int = 0
    gain: float = 0.0
    seed_score: float | None = None
    points: list[tuple[int, float]] = field(default_factory=list)
    live: bool = True
    busy: bool = False

    def recent_rate(self, window: int) -> float:
        """Gain per evaluation over its last ``window`` grants (0 before it spent any)."""
        history = [*self.points, (self.spent, self.gain)]
        then_spent, then_gain = history[max(0, len(history) - 1 - window)]
        spent = self.spent - then_spent
        return (self.gain - then_gain) / spent if spent > 0 else 0.0

    def rate(self) -> float:
        """Gain per evaluation over its whole history."""
        return self.gain / self.spent if self.spent > 0 else 0.0


@dataclass(frozen=True)
class Decision:
    """Grant ``evaluations`` to task ``ord``; ``why`` is stored with the grant."""

    ord: int
    evaluations: int
    why: str


class Policy(Protocol):
    """Decides the next grant of a suite."""

    def decide(self, arms: Sequence[Arm], remaining: int) -> Decision | None:
        """The next grant among the idle, live ``arms`` (``remaining``: evaluations of the
        budget not granted yet, at least 1); None when none should get more."""
        ...


class Bandit:
    """Floors first, then the sliding-window UCB (see the module docstring)."""

    def __init__(self, config: SuiteConfig) -> None:
        self.floor, self.grant = config.floor, config.grant
        self.window, self.exploration = config.window, config.exploration

    def decide(self, arms: Sequence[Arm], remaining: int) -> Decision | None:
        idle = [a for a in arms if a.live and not a.busy]
        if not idle:
            return None
        unfloored = [a for a in idle if a.cap == 0]
        if unfloored:
            return Decision(unfloored[0].ord, min(self.floor, remaining), "floor")
        indices = self.indices(arms)
        best = max(idle, key=lambda a: (indices[a.ord][0], -a.spent, -a.ord))
        index, recent, bonus = indices[best.ord]
        why = f"bandit: index {index:.4g} = recent {recent:.4g}/evaluation + bonus {bonus:.4g}"
        return Decision(best.ord, min(self.grant, remaining), why)

    def indices(self, arms: Sequence[Arm]) -> dict[int, tuple[float, float, float]]:
        """``{ord: (index, recent rate, bonus)}`` of every task that has spent evaluations."""
        spent = [a for a in arms if a.spent > 0]
        total = sum(a.spent for a in spent)
        scale = max([a.rate() for a in spent] + [0.0])
        out = {}
        for arm in spent:
            recent = arm.recent_rate(self.window)
            bonus = self.exploration * scale * math.sqrt(math.log(max(total, 2)) / arm.spent)
            out[arm.ord] = (recent + bonus, recent, bonus)
        for arm in arms:
            out.setdefault(arm.ord, (0.0, 0.0, 0.0))
        return out


class EqualSplit:
    """The budget split equally, each share in one grant (see the module docstring)."""

    def __init__(self, config: SuiteConfig, budget: int, tasks: int) -> None:
        self.grant = config.grant
        self.shares = [budget // tasks + (1 if i < budget % tasks else 0) for i in range(tasks)]

    def decide(self, arms: Sequence[Arm], remaining: int) -> Decision | None:
        idle = [a for a in arms if a.live and not a.busy]
        if not idle:
            return None
        unstarted = [a for a in idle if a.cap == 0]
        if unstarted:
            arm = unstarted[0]
            share = self.shares[arm.ord] if arm.ord < len(self.shares) else self.grant
            return Decision(arm.ord, min(share, remaining), "equal share")
        smallest = min(idle, key=lambda a: (a.cap, a.spent, a.ord))
        return Decision(smallest.ord, min(self.grant, remaining), "equal: given back by others")


def make_policy(config: SuiteConfig, budget: int, tasks: int) -> Policy:
    """The policy ``config.allocation`` names, for a suite of ``tasks`` and ``budget``."""
    if config.allocation == "equal":
        return EqualSplit(config, budget, tasks)
    return Bandit(config)
