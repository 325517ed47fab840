"""MAP-Elites grids: offer() rules, clearing, sampling and statistics."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from evoforge.archive import AddStatus, Archive, ArchiveError, ArchiveStats, Elite
from evoforge.evaluators import Status
from evoforge.problems import Problem
from tests.archive.conftest import MakeProgram, build_program, new_run

offers = st.lists(
    st.tuples(
        st.sampled_from([-1, 0, 1]),  # island
        st.integers(0, 3),  # cell
        st.sampled_from([-1.5, 0.0, 0.5, 2.0, float("inf")]),  # few values: many ties
    ),
    max_size=30,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(offers=offers)
def test_each_cell_keeps_the_first_best_offer(
    shared_archive: Archive, problem: Problem, offers: list[tuple[int, int, float]]
) -> None:
    archive = shared_archive
    run_id = new_run(archive, problem)
    model: dict[tuple[int, int], Elite] = {}
    for seq, (island, cell, score) in enumerate(offers):
        program = build_program(run_id, seq, score=score, cell=cell)
        archive.add_program(program)
        incumbent = model.get((island, cell))
        if incumbent is None:
            expected = AddStatus.NEW
        elif score > incumbent.score:
            expected = AddStatus.IMPROVE_EXISTING
        else:
            expected = AddStatus.NOT_ADDED
        if expected:
            model[island, cell] = Elite(cell, program.id, score, seq)
        assert archive.offer(run_id, island, program) is expected
    for island in (-1, 0, 1):
        want = sorted((e for (i, _), e in model.items() if i == island), key=lambda e: e.cell)
        assert archive.elites(run_id, island) == want


def test_add_status_is_truthy_and_ordered() -> None:
    assert not AddStatus.NOT_ADDED and AddStatus.IMPROVE_EXISTING and AddStatus.NEW
    assert AddStatus.NOT_ADDED < AddStatus.IMPROVE_EXISTING < AddStatus.NEW


def test_ties_keep_the_incumbent(archive: Archive, make_program: MakeProgram, run_id) -> None:
    first, second = make_program(score=1.0, cell=4), make_program(score=1.0, cell=4)
    assert archive.offer(run_id, 0, first) is AddStatus.NEW
    assert archive.offer(run_id, 0, second) is AddStatus.NOT_ADDED
    assert archive.offer(run_id, 0, first) is AddStatus.NOT_ADDED  # re-offering: a tie too
    assert archive.elites(run_id, 0) == [Elite(4, first.id, 1.0, first.seq)]


def test_grids_of_islands_and_runs_are_separate(
    archive: Archive, make_program: MakeProgram, run_id: str, problem: Problem
) -> None:
    program = make_program(score=1.0, cell=2)
    assert archive.offer(run_id, 0, program) is AddStatus.NEW
    assert archive.offer(run_id, -1, program) is AddStatus.NEW
    assert archive.elites(run_id, 1) == []
    other = new_run(archive, problem)
    assert archive.elites(other, 0) == []


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"status": Status.TIMEOUT}, "only ok programs enter a grid; .* is timeout"),
        ({"cell": None}, "cell=None score=1.0; an ok program needs both"),
        ({"score": None}, "cell=0 score=None; an ok program needs both"),
        ({"run_id": "elsewhere"}, "belongs to run 'elsewhere', not"),
    ],
    ids=["not-ok", "no-cell", "no-score", "other-run"],
)
def test_offering_an_unfit_program_raises(
    archive: Archive, run_id: str, fields: dict, message: str
) -> None:
    program = dataclasses.replace(build_program(run_id, 0), **fields)
    with pytest.raises(ValueError, match=message):
        archive.offer(run_id, 0, program)
    assert archive.elites(run_id, 0) == []


def test_offering_before_storing_raises(archive: Archive, run_id: str) -> None:
    with pytest.raises(ValueError, match="is not in run .*; add_program\\(\\) it before"):
        archive.offer(run_id, 0, build_program(run_id, 0))


def test_island_below_global_raises(archive: Archive, make_program: MakeProgram, run_id) -> None:
    with pytest.raises(ValueError, match="island must be >= -1"):
        archive.offer(run_id, -2, make_program())


def test_clear_island(archive: Archive, make_program: MakeProgram, run_id: str) -> None:
    for cell in range(3):
        program = make_program(cell=cell)
        archive.offer(run_id, 0, program)
        archive.offer(run_id, 1, program)
    assert archive.clear_island(run_id, 0) == 3
    assert archive.elites(run_id, 0) == []
    assert len(archive.elites(run_id, 1)) == 3
    assert archive.count_programs(run_id) == 3  # programs stay


class TestSampleElites:
    @pytest.fixture
    def filled(self, archive: Archive, make_program: MakeProgram, run_id: str) -> str:
        for cell in range(5):
            archive.offer(run_id, 0, make_program(cell=cell, score=float(cell)))
        return run_id

    def test_same_seed_same_sample(self, archive: Archive, filled: str) -> None:
        draw = lambda seed: archive.sample_elites(filled, 0, 50, np.random.default_rng(seed))  # noqa: E731
        assert draw(7) == draw(7)
        assert draw(7) != draw(8)
        assert {e.cell for e in draw(7)} == set(range(5))  # uniform over 5: all appear in 50

    def test_indexes_elites_in_cell_order(self, archive: Archive, filled: str) -> None:
        picks = np.random.default_rng(3).integers(0, 5, size=10)
        sample = archive.sample_elites(filled, 0, 10, np.random.default_rng(3))
        assert [e.cell for e in sample] == list(picks)

    def test_zero(self, archive: Archive, filled: str) -> None:
        assert archive.sample_elites(filled, 0, 0, np.random.default_rng(0)) == []

    def test_empty_grid_raises(self, archive: Archive, run_id: str) -> None:
        with pytest.raises(ArchiveError, match="island 3 of run .* has no elites; offer"):
            archive.sample_elites(run_id, 3, 1, np.random.default_rng(0))


def test_stats(archive: Archive, make_program: MakeProgram, run_id: str) -> None:
    for cell, score in [(0, 2.0), (1, -1.0), (5, 2.0)]:
        archive.offer(run_id, -1, make_program(cell=cell, score=score))
    first_best = archive.elites(run_id, -1)[0].program_id
    assert archive.stats(run_id, num_cells=9, qd_offset=-2.0) == ArchiveStats(
        num_elites=3,
        num_cells=9,
        coverage=3 / 9,
        qd_score=(2.0 + 2) + (-1.0 + 2) + (2.0 + 2),
        best_score=2.0,
        mean_score=1.0,
        best_program_id=first_best,  # the lower seq among the two 2.0s
    )
    assert archive.stats(run_id, num_cells=9).qd_score == 3.0


def test_stats_of_an_empty_grid(archive: Archive, run_id: str) -> None:
    assert archive.stats(run_id, 0, num_cells=4) == ArchiveStats(0, 4, 0.0, 0.0, None, None, None)
    with pytest.raises(ValueError, match="num_cells must be >= 1"):
        archive.stats(run_id, num_cells=0)
