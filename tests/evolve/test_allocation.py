"""A suite's allocation decisions: floors first, the sliding-window UCB, the equal split."""

from __future__ import annotations

import math

import pytest

from evoforge.evolve.config import SuiteConfig
from evoforge.evolve.mining import gain_of
from evoforge.evolve.run import Arm, Bandit, EqualSplit, make_policy


@pytest.mark.parametrize(
    ("seed", "best", "gain"),
    [
        (-200.0, -100.0, math.log(2)),  # a minimised count, stored negated: the speedup
        (2.0, 3.0, math.log(1.5)),  # a maximised positive score: the ratio
        (-0.5, 0.5, 2.0),  # signs differ: relative to the seed's magnitude
        (0.0, 0.25, 0.25),
        (None, 3.0, 0.0),
        (2.0, None, 0.0),
    ],
    ids=["minimised", "maximised", "sign-change", "zero-seed", "no-seed", "no-best"],
)
def test_gain_is_the_log_ratio_to_the_seed(seed, best, gain):
    assert gain_of(seed, best) == pytest.approx(gain)


def _arm(ord, spent, gain, points=(), **kw):
    return Arm(ord, f"t{ord}", cap=spent, spent=spent, gain=gain, points=list(points), **kw)


def test_every_task_gets_its_floor_first_in_order():
    bandit = Bandit(SuiteConfig(floor=6, grant=10))
    arms = [_arm(0, 6, 0.5, [(0, 0.0)]), Arm(1, "t1"), Arm(2, "t2")]
    decision = bandit.decide(arms, remaining=100)
    assert (decision.ord, decision.evaluations, decision.why) == (1, 6, "floor")
    assert bandit.decide(arms, remaining=4).evaluations == 4  # never more than remains


def test_the_task_improving_fastest_recently_gets_the_grant():
    bandit = Bandit(SuiteConfig(grant=10, window=2, exploration=0.0))
    # t0 gained a lot early and nothing in its last two grants; t1 gains steadily
    t0 = _arm(0, 40, 1.0, [(0, 0.0), (10, 0.0), (20, 1.0), (30, 1.0)])
    t1 = _arm(1, 40, 0.4, [(0, 0.0), (10, 0.1), (20, 0.2), (30, 0.3)])
    decision = bandit.decide([t0, t1], remaining=100)
    assert decision.ord == 1 and decision.evaluations == 10
    assert decision.why.startswith("bandit: index")
    # with a window over its whole history (UCB1's view), t0's old jump still wins
    assert Bandit(SuiteConfig(window=10, exploration=0.0)).decide([t0, t1], 100).ord == 0


def test_the_bonus_brings_back_a_starved_task_and_busy_or_ended_tasks_get_nothing():
    bandit = Bandit(SuiteConfig(window=1, exploration=1.0))
    starved = _arm(0, 8, 0.0, [(0, 0.0)])
    fed = _arm(1, 200, 0.9, [(0, 0.0), (180, 0.9), (190, 0.9)])
    assert bandit.decide([starved, fed], remaining=50).ord == 0
    indices = bandit.indices([starved, fed])
    assert indices[0][2] > indices[1][2]  # the less evaluated, the larger the bonus
    fed.busy = True
    assert bandit.decide([fed], remaining=50) is None
    assert bandit.decide([_arm(0, 8, 0.0, live=False)], remaining=50) is None


def test_with_no_gain_anywhere_the_least_evaluated_task_goes_first():
    bandit = Bandit(SuiteConfig())
    arms = [_arm(0, 30, 0.0, [(0, 0.0)]), _arm(1, 18, 0.0, [(0, 0.0)]), _arm(2, 18, 0.0)]
    assert bandit.decide(arms, remaining=10).ord == 1


def test_the_equal_split_gives_each_task_its_share_then_what_others_gave_back():
    policy = make_policy(SuiteConfig(allocation="equal", grant=4), budget=20, tasks=3)
    assert isinstance(policy, EqualSplit) and policy.shares == [7, 7, 6]
    arms = [Arm(0, "a"), Arm(1, "b"), Arm(2, "c")]
    decisions = []
    for _ in range(3):
        decision = policy.decide(arms, remaining=20 - sum(a.cap for a in arms))
        arms[decision.ord].cap = decision.evaluations
        arms[decision.ord].busy = True
        decisions.append((decision.ord, decision.evaluations))
    assert decisions == [(0, 7), (1, 7), (2, 6)]
    arms[0].live = False  # it ended after 3 and gave back 4
    arms[0].cap = 3
    for arm in arms[1:]:
        arm.busy, arm.spent = False, arm.cap
    assert (policy.decide(arms, remaining=4).ord, policy.decide(arms, 4).evaluations) == (2, 4)
