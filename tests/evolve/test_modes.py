"""Edit modes: validated weights, mode draws, and repair choices kept in the archive."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from evoforge.archive import Archive
from evoforge.evaluators import Status
from evoforge.evolve import ConfigError
from evoforge.evolve.prompts._modes import Mode, ModeConfig, choose_mode, pick_repair
from tests.evolve.run_history import SEED, History, variant

RNG = np.random.default_rng
ALWAYS = ModeConfig(repair_rate=1.0)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"diff": -0.1}, r"modes.diff = -0.1: must be at least 0"),
        ({"rewrite": math.nan}, r"modes.rewrite = nan"),
        ({"crossover": math.inf}, r"modes.crossover = inf"),
        ({"diff": 0, "rewrite": 0, "crossover": 0}, r"weights are all 0"),
        ({"repair_rate": 1.5}, r"modes.repair_rate = 1.5: must be at most 1"),
        ({"repair_window": 0}, r"modes.repair_window = 0"),
    ],
    ids=["negative", "nan", "inf", "all-zero", "rate-above-1", "window-0"],
)
def test_mode_config_rejects_bad_values(fields: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ModeConfig(**fields)


def test_modes_are_drawn_by_their_weights() -> None:
    rng = RNG(7)
    config = ModeConfig(diff=0.5, rewrite=0.3, crossover=0.2)
    counts = Counter(choose_mode(rng, config, can_crossover=True) for _ in range(6000))
    for mode, weight in ((Mode.DIFF, 0.5), (Mode.REWRITE, 0.3), (Mode.CROSSOVER, 0.2)):
        assert abs(counts[mode] / 6000 - weight) < 0.03
    assert Mode.REPAIR not in counts  # repair is pick_repair's decision, never drawn


def test_without_a_second_parent_crossover_is_never_drawn() -> None:
    rng = RNG(1)
    config = ModeConfig(diff=1, rewrite=1, crossover=2)
    counts = Counter(choose_mode(rng, config, can_crossover=False) for _ in range(2000))
    assert set(counts) == {Mode.DIFF, Mode.REWRITE}
    assert abs(counts[Mode.DIFF] / 2000 - 0.5) < 0.05
    only = ModeConfig(diff=0, rewrite=0, crossover=1)
    assert choose_mode(RNG(0), only, can_crossover=False) is Mode.DIFF
    assert choose_mode(RNG(0), only, can_crossover=True) is Mode.CROSSOVER


def test_choose_mode_draws_exactly_one_number() -> None:
    for can in (True, False):
        rng, twin = RNG(3), RNG(3)
        choose_mode(rng, ModeConfig(), can_crossover=can)
        twin.random()
        assert rng.random() == twin.random()


@pytest.fixture
def history(tmp_path: Path):
    with Archive(tmp_path / "a.db") as archive:
        yield History(archive)


def failure(history: History, parent, n: int, status=Status.RUNTIME_ERROR, **fields):
    return history.add(
        variant(n), parent=parent, status=status, artifacts={"error": f"E{n}"}, **fields
    )


def test_pick_repair_returns_a_recent_repairable_failure_of_the_island(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    assert pick_repair(history.archive, history.run_id, 0, RNG(0), ALWAYS) is None
    failed = failure(history, seed, 1, Status.INCORRECT)
    picks = [pick_repair(history.archive, history.run_id, 0, RNG(n), ALWAYS) for n in range(5)]
    assert picks == [failed] * 5
    assert pick_repair(history.archive, history.run_id, 1, RNG(0), ALWAYS) is None  # island 1


@pytest.mark.parametrize(
    "status",
    [
        Status.INCORRECT,
        Status.COMPILE_ERROR,
        Status.RUNTIME_ERROR,
        Status.SYNTAX_ERROR,
        Status.TIMEOUT,
    ],
    ids=str,
)
def test_each_repairable_status_is_picked(history: History, status: Status) -> None:
    seed = history.add(SEED, score=1.0)
    failed = failure(history, seed, 1, status)
    assert pick_repair(history.archive, history.run_id, 0, RNG(0), ALWAYS) == failed


def test_failures_that_cannot_or_need_not_be_repaired_are_skipped(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    history.add(None, parent=seed, status=Status.EDIT_ERROR)  # no source
    for n, status in enumerate((Status.CRASHED, Status.MEMORY_LIMIT, Status.SANDBOX_VIOLATION)):
        failure(history, seed, 10 + n, status)
    failure(history, seed, 20, edit_kind="repair")  # a failed fix is not fixed again
    tried = failure(history, seed, 21)
    history.add(None, parent=tried, status=Status.EDIT_ERROR, edit_kind="repair")  # tried once
    assert pick_repair(history.archive, history.run_id, 0, RNG(0), ALWAYS) is None


def test_only_failures_within_the_window_are_recent(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    old = failure(history, seed, 1)
    for n in range(4):
        history.add(variant(100 + n), parent=seed, score=1.0, cell=1 + n % 3)
    window = ModeConfig(repair_rate=1.0, repair_window=4)
    assert pick_repair(history.archive, history.run_id, 0, RNG(0), window) is None
    wider = ModeConfig(repair_rate=1.0, repair_window=5)
    assert pick_repair(history.archive, history.run_id, 0, RNG(0), wider) == old


def test_repair_choices_survive_reopening_the_archive(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.db") as archive:
        history = History(archive)
        seed = history.add(SEED, score=1.0)
        failures = [failure(history, seed, n) for n in range(3)]
        first = [pick_repair(archive, history.run_id, 0, RNG(n), ALWAYS) for n in range(10)]
        history.add(variant(50), parent=failures[0], edit_kind="repair", score=2.0)  # repaired
    with Archive(tmp_path / "a.db") as archive:
        again = [pick_repair(archive, history.run_id, 0, RNG(n), ALWAYS) for n in range(10)]
    ids = [p.id for p in failures]
    assert {p.id for p in first} == set(ids)
    assert {p.id for p in again} == set(ids[1:])  # the repaired one is not offered again


def test_repair_rate_is_the_share_of_candidates_that_repair(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    failure(history, seed, 1)
    rng = RNG(11)
    config = ModeConfig(repair_rate=0.3)
    picked = sum(
        pick_repair(history.archive, history.run_id, 0, rng, config) is not None
        for _ in range(2000)
    )
    assert abs(picked / 2000 - 0.3) < 0.04
    never = ModeConfig(repair_rate=0.0)
    assert all(
        pick_repair(history.archive, history.run_id, 0, RNG(n), never) is None for n in range(50)
    )


def test_failures_being_repaired_in_flight_are_skipped(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    first, second = failure(history, seed, 1), failure(history, seed, 2)
    picks = {
        pick_repair(history.archive, history.run_id, 0, RNG(n), ALWAYS, busy={second.id}).id
        for n in range(10)
    }
    assert picks == {first.id}
    busy = {first.id, second.id}
    assert pick_repair(history.archive, history.run_id, 0, RNG(0), ALWAYS, busy=busy) is None
