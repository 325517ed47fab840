"""Per-instance Pareto parents (GEPA's rule): leaders per instance, weighted by their leads."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from evoforge.archive import Archive, Program, program_id
from evoforge.evaluators import Status
from evoforge.islands import IslandConfig, Islands, pareto_instances, per_instance, tournament
from evoforge.problems import InstanceScores, load_problem
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC


def _draws(scores, instances, n=4000):
    rng = np.random.default_rng(0)
    return collections.Counter(pareto_instances(scores, rng, instances) for _ in range(n))


def test_parents_are_the_leaders_of_some_instance_weighted_by_how_many_they_lead():
    instances = [
        {"a": 9.0, "b": 1.0, "c": 1.0},  # leads a
        {"a": 1.0, "b": 9.0, "c": 9.0},  # leads b and c
        {"a": 5.0, "b": 5.0, "c": 5.0},  # the best aggregate of the three, leads nothing
    ]
    drawn = _draws([3.7, 6.3, 5.0], instances)
    assert set(drawn) == {0, 1}
    assert drawn[1] / drawn[0] == pytest.approx(2.0, rel=0.15)


def test_a_leader_whose_every_lead_is_shared_is_dominated_and_dropped():
    instances = [
        {"a": 9.0, "b": 9.0},  # ties with 1 on a, alone on b
        {"a": 9.0, "b": 1.0},  # only ever tied: dominated (lower aggregate)
        {"a": 1.0, "b": 1.0, "c": 4.0},  # alone on c
    ]
    assert set(_draws([9.0, 5.0, 2.0], instances, 500)) == {0, 2}
    twins = [{"a": 1.0}, {"a": 1.0}]  # identical leads: one of them stays
    assert len(_draws([1.0, 2.0], twins, 200)) == 1


def test_without_instances_the_aggregate_is_the_one_instance():
    assert set(_draws([1.0, 3.0, 2.0], [{}, {}, {}], 400)) == {1}


def test_instance_scores_are_read_oriented_and_bad_entries_left_out():
    minimise = InstanceScores(metric="per_test", direction="minimize")
    metrics = {"per_test": {"0": 5, "1": 2.5, "2": float("nan"), "3": "x", "4": True}}
    assert minimise.of(metrics) == {"0": -5.0, "1": -2.5}
    assert minimise.of({"per_test": 3.0}) == {} and minimise.of({}) == {}
    assert per_instance(pareto_instances) and not per_instance(tournament)


def test_islands_hand_a_per_instance_strategy_each_elites_scores(make_problem, tmp_path):
    problem = load_problem(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED))
    scores = InstanceScores(metric="per_set")
    seen = []

    def spy(scores_, rng, instances=()):
        seen.append(list(instances))
        return pareto_instances(scores_, rng, instances)

    with Archive(tmp_path / "i.db") as archive:
        run = archive.create_run(problem, config={}, seed=0)
        config = IslandConfig(count=1, exploitation=0.0, inspirations=0)
        islands = Islands(archive, run.id, config, spy, instances=scores)
        tables = [{"x": 1.0, "y": 0.0}, {"x": 0.0, "y": 2.0}, {"x": 0.5, "y": 0.5}]
        for seq, (table, cell) in enumerate(zip(tables, (0, 1, 2), strict=True)):
            source = f"# EVOLVE-BLOCK-START\nx = {seq}\n# EVOLVE-BLOCK-END\n"
            program = Program(
                run_id=run.id, id=program_id(source), seq=seq, source=source, parent_id=None,
                island=0, generation=0, status=Status.OK, score=float(seq), cell=cell,
                metrics={"per_set": table},
            )  # fmt: skip
            with archive.transaction():
                archive.add_program(program)
                islands.record(program)
        picked = {islands.select(0, np.random.default_rng(s)).parent.seq for s in range(60)}
        assert picked == {0, 1}  # the all-round third program leads on no set
        assert sorted(map(sorted, seen[0])) == [["x", "y"]] * 3
        plain = Islands(archive, run.id, config, tournament, scores)
        assert plain._instances is None  # a strategy without `instances` is called as before
