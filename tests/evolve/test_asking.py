"""What a candidate asks: a repeated request is varied honestly; a resting parent is passed
over; with nothing repeated, a plan draws what it drew before."""

from __future__ import annotations

from pathlib import Path

import pytest

from evoforge.archive import Archive
from evoforge.evaluators import Status
from evoforge.evolve import RunConfig
from evoforge.evolve.models import ModelPool
from evoforge.evolve.prompts import FOCUS
from evoforge.evolve.search._asking import Asking
from evoforge.evolve.search._state import SearchState
from evoforge.islands import BUILTIN_STRATEGIES, Islands
from tests.evolve.run_history import PROBLEM, SEED, History, variant

# One island, diffs only, no repair: only what the test sets up differs between plans.
MODES = {"diff": 1.0, "rewrite": 0.0, "crossover": 0.0, "repair_rate": 0.0}


@pytest.fixture
def history(tmp_path: Path):
    with Archive(tmp_path / "a.db") as archive:
        yield History(archive)


def asking(history: History, **search) -> Asking:
    config = RunConfig(
        problem="line", model="openai/greedy", modes=MODES, islands={"count": 1},
        search={"descriptors": "none", **search},
    )  # fmt: skip
    run = history.archive.run(history.run_id)
    islands = Islands(history.archive, run.id, config.islands, BUILTIN_STRATEGIES["uniform"])
    search_state = SearchState(history.archive, run, PROBLEM, config)
    pool = ModelPool(config.ensemble_specs, policy=config.ensemble)
    return Asking(history.archive, run, PROBLEM, config, islands, search_state, pool)


def test_a_request_already_sent_is_asked_from_another_angle(history) -> None:
    history.add(SEED, score=1.0)  # one elite: every draw selects it
    ask = asking(history)
    first = ask.plan(1, evaluations=1)
    ask.settle(first, answered=True)
    second = ask.plan(2, evaluations=1)  # in flight with the third
    third = ask.plan(3, evaluations=1)
    keys = {first.key, second.key, third.key}
    assert len(keys) == 3 and None not in keys
    assert first.request.templates == {}
    for plan in (second, third):
        assert plan.context.parent.id == first.context.parent.id
        assert FOCUS in plan.request.templates["task_diff"]
    assert second.request.templates != third.request.templates
    assert (ask.ledger.varied, ask.ledger.repeated) == (2, 0)


def test_without_variation_the_same_request_goes_out_again(history) -> None:
    history.add(SEED, score=1.0)
    ask = asking(history, request_variation=False)
    first, second = ask.plan(1, evaluations=1), ask.plan(2, evaluations=1)
    assert first.key is None and ask.ledger is None
    assert first.request.context == second.request.context
    assert first.request.templates == second.request.templates == {}


def test_a_new_request_draws_what_it_drew_without_the_ledger(history) -> None:
    seed = history.add(SEED, score=1.0)
    for n in range(1, 6):
        history.add(variant(n), parent=seed, score=1.0 + n, cell=n % 4)
    on, off = asking(history), asking(history, request_variation=False)
    compared = 0
    for seq in range(1, 8):
        plan, plain = on.plan(seq, evaluations=6), off.plan(seq, evaluations=6)
        on.settle(plan, answered=True)
        if not on.ledger.varied:  # while nothing repeated, the plans are the same
            assert plan.request == plain.request
            compared += 1
    assert compared >= 3


def test_a_parent_that_keeps_producing_duplicates_rests(history) -> None:
    seed = history.add(SEED, score=1.0)
    other = history.add(variant(1), parent=seed, score=0.5, cell=1)
    for _ in range(3):
        history.add(
            None, parent=seed, status=Status.DUPLICATE,
            artifacts={"rule": "exact", "duplicate_of": seed.id},
        )  # fmt: skip
    ask = asking(history, rest_after=3)
    parents = {ask.plan(seq, evaluations=2).context.parent.id for seq in range(5, 9)}
    assert parents == {other.id}
    ask = asking(history, rest_after=0)  # resting off: the seed is chosen again
    assert seed.id in {ask.plan(seq, evaluations=2).context.parent.id for seq in range(5, 12)}
