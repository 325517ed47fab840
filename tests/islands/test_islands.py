"""Island model: selection strategies, migration along the ring, reset of stagnant islands."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import given, strategies as st

from evoforge.archive import Archive, Program, program_id
from evoforge.evaluators import Status
from evoforge.islands import BUILTIN_STRATEGIES, GLOBAL, IslandConfig, Islands
from evoforge.problems import load_problem
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC


@pytest.fixture
def problem(make_problem):
    return load_problem(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED))


@pytest.fixture
def archive(tmp_path):
    with Archive(tmp_path / "evoforge.islands.db") as archive:
        yield archive


def make_islands(archive, problem, **options):
    config = IslandConfig(**{"count": 3, "stagnation": 0, **options})
    run = archive.create_run(problem, config={}, seed=0)
    return Islands(archive, run.id, config, BUILTIN_STRATEGIES["tournament"])


def program(islands, seq, score, *, island=0, cell=0, status=Status.OK):
    source = f"# EVOLVE-BLOCK-START\nx = {seq}\n# EVOLVE-BLOCK-END\n"
    ok = status == Status.OK
    return Program(
        run_id=islands.run_id,
        id=program_id(source),
        seq=seq,
        source=source,
        parent_id=None,
        island=island,
        generation=0,
        status=status,
        score=score if ok else None,
        cell=cell if ok else None,
    )


def store(islands, prog):
    with islands.archive.transaction():
        islands.archive.add_program(prog)
        return islands.record(prog)


def seeded(archive, problem, **options):
    islands = make_islands(archive, problem, **options)
    seed = program(islands, 0, 0.0)
    with archive.transaction():
        archive.add_program(seed)
        islands.seed(seed)
    return islands


def test_seed_enters_every_island_and_the_global_grid(archive, problem):
    islands = seeded(archive, problem)
    for island in (GLOBAL, 0, 1, 2):
        assert [e.score for e in archive.elites(islands.run_id, island)] == [0.0]


def test_record_updates_own_island_and_global_only(archive, problem):
    islands = seeded(archive, problem)
    outcome = store(islands, program(islands, 1, 5.0, island=1, cell=2))
    assert outcome.added and outcome.island_added
    assert {e.cell for e in archive.elites(islands.run_id, 1)} == {0, 2}
    assert {e.cell for e in archive.elites(islands.run_id, 2)} == {0}
    assert {e.cell for e in archive.elites(islands.run_id, GLOBAL)} == {0, 2}


def test_failed_program_counts_toward_stagnation_but_enters_no_grid(archive, problem):
    islands = seeded(archive, problem)
    store(islands, program(islands, 1, 0.0, status=Status.TIMEOUT))
    assert len(archive.elites(islands.run_id, 0)) == 1
    assert archive.island_state(islands.run_id, 0).evals_since_improvement == 1


def test_migration_sends_best_elites_along_the_ring(archive, problem):
    islands = seeded(archive, problem, migration_interval=2, migration_rate=0.5)
    store(islands, program(islands, 1, 3.0, island=2, cell=1))
    outcome = store(islands, program(islands, 2, 4.0, island=2, cell=2))
    assert [kind for kind, _, _ in outcome.events] == ["migration"]
    kind, target, data = outcome.events[0]
    assert (data["from"], data["to"], target) == (2, 0, 0)  # the ring wraps around
    # 3 elites * 0.5 rounds up to 2 migrants: the two best.
    assert len(data["sent"]) == 2
    assert {e.cell for e in archive.elites(islands.run_id, 0)} == {0, 1, 2}
    assert archive.island_state(islands.run_id, 2).accepted_since_migration == 0
    assert [e.data["to"] for e in archive.events(islands.run_id, "migration")] == [0]


def test_an_island_migrates_after_migration_evaluations_without_acceptances(archive, problem):
    """Evaluations on an island trigger a migration even when nothing enters its grid."""
    islands = seeded(archive, problem, migration_interval=1000, migration_evaluations=3)
    for seq in (1, 2):
        outcome = store(islands, program(islands, seq, 0.0, island=1, status=Status.TIMEOUT))
        assert not outcome.events
    assert archive.island_state(islands.run_id, 1).evals_since_migration == 2
    outcome = store(islands, program(islands, 3, 0.0, island=1, status=Status.TIMEOUT))
    assert [(kind, target) for kind, target, _ in outcome.events] == [("migration", 2)]
    state = archive.island_state(islands.run_id, 1)
    assert (state.evals_since_migration, state.migrations) == (0, 1)
    assert archive.island_state(islands.run_id, 0).evals_since_migration == 0  # its own count


def test_migration_by_evaluations_can_be_turned_off(archive, problem):
    islands = seeded(archive, problem, migration_interval=1000, migration_evaluations=0)
    for seq in range(1, 60):
        assert not store(islands, program(islands, seq, 0.0, status=Status.TIMEOUT)).events


def test_evaluations_since_migration_continue_after_a_reopen(tmp_path, problem):
    path = tmp_path / "resume.db"
    options = {"migration_interval": 1000, "migration_evaluations": 3}
    with Archive(path) as archive:
        islands = seeded(archive, problem, **options)
        for seq in (1, 2):
            store(islands, program(islands, seq, 0.0, status=Status.TIMEOUT))
    with Archive(path) as archive:
        resumed = Islands(archive, islands.run_id, islands.config, BUILTIN_STRATEGIES["uniform"])
        outcome = store(resumed, program(resumed, 3, 0.0, status=Status.TIMEOUT))
        assert [kind for kind, _, _ in outcome.events] == ["migration"]


def test_stagnant_island_is_reset_from_the_best_other_island(archive, problem):
    islands = seeded(archive, problem, stagnation=3, migration_interval=1000)
    store(islands, program(islands, 1, 9.0, island=1, cell=3))  # island 1 leads
    for seq in range(2, 5):  # island 0 sees three evaluations without improvement
        outcome = store(islands, program(islands, seq, -1.0 * seq, island=0, cell=1))
    assert [kind for kind, _, _ in outcome.events] == ["reset"]
    elites = archive.elites(islands.run_id, 0)
    assert [(e.cell, e.score) for e in elites] == [(3, 9.0)]
    state = archive.island_state(islands.run_id, 0)
    assert (state.resets, state.evals_since_improvement, state.best_score) == (1, 0, 9.0)


def test_leading_island_is_never_reset(archive, problem):
    islands = seeded(archive, problem, stagnation=2)
    store(islands, program(islands, 1, 9.0, island=0, cell=3))
    for seq in range(2, 6):
        outcome = store(islands, program(islands, seq, 1.0, island=0, cell=3))
        assert not outcome.events
    assert archive.island_state(islands.run_id, 0).resets == 0


def test_islands_are_rebuilt_from_sqlite(tmp_path, problem):
    path = tmp_path / "reopen.db"
    with Archive(path) as archive:
        islands = seeded(archive, problem, migration_interval=1000)
        store(islands, program(islands, 1, 2.0, island=1, cell=1))
        run_id = islands.run_id
        before = [archive.elites(run_id, i) for i in (GLOBAL, 0, 1, 2)]
    with Archive(path) as archive:
        rebuilt = Islands(archive, run_id, islands.config, BUILTIN_STRATEGIES["tournament"])
        assert [archive.elites(run_id, i) for i in (GLOBAL, 0, 1, 2)] == before
        choice = rebuilt.select(1, np.random.default_rng(0))
        assert choice.parent.id in {e.program_id for e in before[2]}


def test_select_gives_distinct_inspirations_and_the_global_best(archive, problem):
    islands = seeded(archive, problem, inspirations=2)
    for seq, (island, cell, score) in enumerate([(0, 1, 1.0), (0, 2, 2.0), (1, 3, 7.0)], 1):
        store(islands, program(islands, seq, score, island=island, cell=cell))
    selection = islands.select(0, np.random.default_rng(3))
    ids = [selection.parent.id, *(p.id for p in selection.inspirations)]
    assert len(ids) == len(set(ids)) == 3
    best = max(archive.elites(islands.run_id, GLOBAL), key=lambda e: e.score)
    assert best.program_id in ids  # the run's best from island 1 inspires island 0


def test_selection_is_deterministic_for_a_seeded_rng(archive, problem):
    islands = seeded(archive, problem)
    for seq in range(1, 4):
        store(islands, program(islands, seq, float(seq), island=0, cell=seq))
    picks = [islands.select(0, np.random.default_rng(11)).parent.id for _ in range(3)]
    assert len(set(picks)) == 1


def _parents(islands, n=200):
    return [islands.select(0, np.random.default_rng(seed)).parent.score for seed in range(n)]


@pytest.mark.parametrize(("exploitation", "best_share"), [(1.0, (1.0, 1.0)), (0.5, (0.5, 0.8))])
def test_exploitation_is_the_share_of_parents_that_are_the_islands_best(
    archive, problem, exploitation, best_share
):
    islands = seeded(archive, problem, exploitation=exploitation)
    for seq in range(1, 9):  # eight elites of scores 1..8 in eight cells of island 0
        store(islands, program(islands, seq, float(seq), island=0, cell=seq))
    parents = _parents(islands)
    share = parents.count(8.0) / len(parents)
    # 0.5 exploitation plus what tournaments of 3 among 9 elites give the best (~1/3 of them)
    assert best_share[0] <= share <= best_share[1]


def test_without_exploitation_the_strategy_picks_every_parent(archive, problem):
    islands = seeded(archive, problem, exploitation=0.0)
    for seq in range(1, 9):
        store(islands, program(islands, seq, float(seq), island=0, cell=seq))
    parents = _parents(islands)
    assert parents.count(8.0) / len(parents) < 0.5
    assert len(set(parents)) >= 5  # weaker elites are parents too


@pytest.mark.parametrize("name", sorted(BUILTIN_STRATEGIES))
@given(scores=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=30), seed=st.integers(0, 99))
def test_strategies_return_a_valid_index(name, scores, seed):
    index = BUILTIN_STRATEGIES[name](scores, np.random.default_rng(seed))
    assert 0 <= index < len(scores)


@pytest.mark.parametrize("name", ["tournament", "rank", "fitness_weighted"])
def test_greedy_strategies_prefer_better_scores(name):
    scores = [0.0, 1.0, 2.0, 3.0, 10.0]
    rng = np.random.default_rng(0)
    counts = collections.Counter(BUILTIN_STRATEGIES[name](scores, rng) for _ in range(2000))
    assert counts[4] > counts[0] * 2


def test_uniform_strategy_is_uniform():
    rng = np.random.default_rng(0)
    counts = collections.Counter(
        BUILTIN_STRATEGIES["uniform"]([5.0, 1.0], rng) for _ in range(4000)
    )
    assert abs(counts[0] - counts[1]) < 300


@pytest.mark.parametrize(
    "options",
    [
        {"count": 0},
        {"migration_rate": 0.0},
        {"migration_interval": 0},
        {"migration_evaluations": -1},
        {"stagnation": -1},
    ],
    ids=[
        "no-islands",
        "zero-rate",
        "zero-interval",
        "negative-evaluations",
        "negative-stagnation",
    ],
)
def test_bad_island_config_is_rejected(options):
    with pytest.raises(ValueError):
        IslandConfig(**options)
