"""A parent that keeps producing duplicates rests: its island picks another parent for a while."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evoforge.archive import Archive
from evoforge.evaluators import Status
from evoforge.evolve.search._resting import rests
from evoforge.islands import BUILTIN_STRATEGIES, IslandConfig, Islands
from tests.evolve.run_history import SEED, History, variant

ISLANDS = 2


@pytest.fixture
def history(tmp_path: Path):
    with Archive(tmp_path / "a.db") as archive:
        yield History(archive)


def twins(history: History, parent, n: int) -> int:
    """``n`` duplicate children of ``parent``; the last one's seq."""
    for _ in range(n):
        child = history.add(
            None, parent=parent, status=Status.DUPLICATE,
            artifacts={"rule": "exact", "duplicate_of": parent.id},
        )  # fmt: skip
    return child.seq


def resting(history: History, parent, seq: int, after: int = 3, selections: int = 4) -> bool:
    return rests(
        history.archive, history.run_id, parent.id, seq,
        after=after, selections=selections, islands=ISLANDS,
    )  # fmt: skip


def test_three_duplicates_in_a_row_rest_a_parent_for_its_islands_next_selections(history):
    seed = history.add(SEED, score=1.0)
    last = twins(history, seed, 3)
    # 4 selections of its island: the run's next 4 x 2 candidates (islands take turns)
    assert [resting(history, seed, last + d) for d in (1, 8, 9)] == [True, True, False]
    assert not resting(history, seed, last + 1, after=4)  # only 3 in a row
    assert not resting(history, seed, last + 1, after=0)  # [search] rest_after = 0: off


def test_a_child_that_is_not_a_duplicate_breaks_the_row(history):
    seed = history.add(SEED, score=1.0)
    twins(history, seed, 2)
    history.add(variant(1), parent=seed, score=2.0)
    last = twins(history, seed, 2)
    assert not resting(history, seed, last + 1)
    history.add(None, parent=seed, status=Status.EDIT_ERROR, artifacts={"error": "not found"})
    assert not resting(history, seed, last + 2)
    last = twins(history, seed, 3)
    assert resting(history, seed, last + 1)


def test_an_island_passes_over_the_parents_it_is_told_to_avoid(history):
    seed = history.add(SEED, score=1.0)
    other = history.add(variant(1), parent=seed, score=2.0, cell=1)
    islands = Islands(
        history.archive, history.run_id, IslandConfig(count=1, exploitation=1.0),
        BUILTIN_STRATEGIES["tournament"],
    )  # fmt: skip
    rng = np.random.default_rng
    assert islands.select(0, rng(0)).parent.id == other.id  # the best, always
    assert islands.select(0, rng(0), avoid={other.id}).parent.id == seed.id
    # the resting parent is still an inspiration
    assert other.id in {p.id for p in islands.select(0, rng(0), avoid={other.id}).inspirations}
    # an island with no other elite keeps its only parent
    assert islands.select(0, rng(0), avoid={seed.id, other.id}).parent.id == other.id
