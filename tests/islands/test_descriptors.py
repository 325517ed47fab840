"""Built-in descriptors: size and distance on fixed ranges, only for problems without any."""

from __future__ import annotations

import math

import pytest

from evoforge.islands import (
    BUILTIN_DESCRIPTORS,
    BuiltinDescriptors,
    code_tokens,
    evolving_code,
    with_builtin_descriptors,
)
from evoforge.problems import Descriptor
from tests.islands.conftest import SEED, variant


def test_builtin_descriptors_have_fixed_declared_ranges():
    assert [(d.name, d.low, d.high, d.bins) for d in BUILTIN_DESCRIPTORS] == [
        ("size", -1.5, 1.5, 10),
        ("distance", 0.0, 1.0, 10),
    ]


def test_a_problem_without_descriptors_gets_them(plain_problem):
    problem = with_builtin_descriptors(plain_problem)
    assert problem.descriptors == BUILTIN_DESCRIPTORS
    assert problem.num_cells == 100
    assert problem.seed_source == plain_problem.seed_source


def test_a_problem_with_declared_descriptors_is_unchanged(plain_problem):
    import dataclasses

    declared = dataclasses.replace(plain_problem, descriptors=(Descriptor("a", 0, 1, 4),))
    assert with_builtin_descriptors(declared) is declared


def test_the_seed_is_size_zero_and_distance_zero_on_an_empty_island(grid_archive, run_id):
    builtin = BuiltinDescriptors(grid_archive, run_id, SEED)
    assert builtin.values(SEED, island=0) == {"size": 0.0, "distance": 0.0}


def test_size_is_log2_of_tokens_over_the_seeds(grid_archive, run_id):
    builtin = BuiltinDescriptors(grid_archive, run_id, SEED)
    longer = variant(3, lines=4)
    tokens = len(code_tokens(evolving_code(longer)))
    seed_tokens = len(code_tokens(evolving_code(SEED)))
    assert builtin.values(longer, 0)["size"] == pytest.approx(math.log2(tokens / seed_tokens))


def test_values_outside_the_ranges_fall_in_the_end_bins(grid_archive, run_id, plain_problem):
    problem = with_builtin_descriptors(plain_problem)
    builtin = BuiltinDescriptors(grid_archive, run_id, SEED)
    huge = builtin.values(variant(3, lines=60), 0)
    assert huge["size"] > 1.5
    assert problem.cell_of(huge) == 9 * 10 + 0  # last size bin, distance 0
    tiny = builtin.values("x = 1\n", 0)
    assert tiny["size"] < -1.5
    assert problem.cell_of(tiny) == 0
    assert problem.cell_of({"size": 0.0, "distance": 5.0}) == 5 * 10 + 9


def test_distance_is_the_root_of_the_mean_jaccard_distance_to_the_islands_elites(
    grid_archive, run_id, store
):
    builtin = BuiltinDescriptors(grid_archive, run_id, SEED)
    store(SEED, cell=0)
    assert builtin.values(SEED, 0)["distance"] == 0.0  # itself excluded: no other elite
    same_tokens = SEED.replace("a", "alpha")  # renamed: identical tokens
    assert builtin.values(same_tokens, 0)["distance"] == 0.0
    other = builtin.values(variant(5, lines=3), 0)["distance"]
    assert 0.0 < other <= 1.0
    store(variant(5, lines=3), cell=1)
    # now the variant is an elite too: the seed's distance is measured against it alone
    assert builtin.values(SEED, 0)["distance"] == pytest.approx(other)
    assert builtin.values(SEED, 1)["distance"] == 0.0  # another island: empty


def test_distance_uses_at_most_sixteen_best_elites_and_is_deterministic(
    grid_archive, run_id, store
):
    for i in range(20):
        store(variant(i), cell=i, score=float(i))
    builtin = BuiltinDescriptors(grid_archive, run_id, SEED)
    first = builtin.values(variant(100), 0)
    again = BuiltinDescriptors(grid_archive, run_id, SEED).values(variant(100), 0)
    assert first == again
    assert 0.0 < first["distance"] <= 1.0
