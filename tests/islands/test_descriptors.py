"""Built-in descriptors: size and distance on fixed ranges, only for problems without any."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from evoforge.islands import (
    BUILTIN_DESCRIPTORS,
    BuiltinDescriptors,
    code_tokens,
    evolving_code,
    with_builtin_descriptors,
)
from evoforge.islands._descriptors import size_value  # not public: a detail of "size"
from evoforge.problems import Descriptor
from evoforge.problems.adapters._openevolve_features import BUILTIN as OPENEVOLVE_BUILTIN
from tests.islands.conftest import SEED, variant

SIZE, DISTANCE = BUILTIN_DESCRIPTORS


def seed_tokens(seed: str = SEED) -> int:
    return len(code_tokens(evolving_code(seed)))


def test_builtin_descriptors_have_fixed_declared_ranges():
    assert [(d.name, d.low, d.high, d.bins) for d in BUILTIN_DESCRIPTORS] == [
        ("size", -4.4, 4.4, 11),
        ("distance", 0.0, 1.0, 10),
    ]


def test_openevolve_folders_use_the_same_ranges():
    """An OpenEvolve folder's complexity and diversity are these descriptors: one range."""
    declared = {name: (low, high) for name, low, high in OPENEVOLVE_BUILTIN.values()}
    assert declared == {d.name: (d.low, d.high) for d in BUILTIN_DESCRIPTORS}


def test_a_problem_without_descriptors_gets_them(plain_problem):
    problem = with_builtin_descriptors(plain_problem)
    assert problem.descriptors == BUILTIN_DESCRIPTORS
    assert problem.num_cells == 110
    assert problem.seed_source == plain_problem.seed_source


def test_a_problem_with_declared_descriptors_is_unchanged(plain_problem):
    import dataclasses

    declared = dataclasses.replace(plain_problem, descriptors=(Descriptor("a", 0, 1, 4),))
    assert with_builtin_descriptors(declared) is declared


def test_the_seed_is_size_zero_and_distance_zero_in_the_middle_size_bin():
    values = BuiltinDescriptors(SEED).values(SEED)
    assert values == {"size": 0.0, "distance": 0.0}
    assert SIZE.bin(values["size"]) == 5  # centred: shorter and longer go either side


def test_size_is_the_asinh_of_the_relative_token_change_in_two_percent_units():
    longer = variant(3, lines=4)
    change = (seed_tokens(longer) - seed_tokens()) / seed_tokens()
    size = BuiltinDescriptors(SEED).values(longer)["size"]
    assert size == pytest.approx(math.asinh(change / 0.02))


@pytest.mark.parametrize(
    ("change", "bin_"),
    [(0.0, 5), (0.005, 5), (-0.005, 5), (0.02, 6), (-0.02, 4), (0.05, 7), (0.1, 8), (0.3, 9)],
    ids=["seed", "+0.5%", "-0.5%", "+2%", "-2%", "+5%", "+10%", "+30%"],
)
def test_small_size_changes_already_move_a_bin(change, bin_):
    """The issue's grid kept children within 23 % of the seed's length in one size bin;
    a 2 % change (2 tokens of 100) now reaches the next one."""
    seed = 1000
    assert SIZE.bin(size_value(round(seed * (1 + change)), seed)) == bin_


def test_distance_is_the_root_of_the_jaccard_distance_to_the_seed(grid_archive, run_id, store):
    builtin = BuiltinDescriptors(SEED)
    same_tokens = SEED.replace("a", "alpha")  # renamed: identical tokens
    assert builtin.values(same_tokens)["distance"] == 0.0
    one_constant = SEED.replace("0.25", "0.3")
    distance = builtin.values(one_constant)["distance"]
    assert 0.0 < distance < builtin.values(variant(5, lines=3))["distance"] <= 1.0
    # one changed token of a 120-token block (0.08) lands in bin 2, not in the seed's bin 0
    assert DISTANCE.bin(math.sqrt(0.08)) == 2


def test_values_are_the_same_on_every_island_and_at_any_time(grid_archive, run_id, store):
    """A cell no longer depends on what the island holds: stable across islands, resumes."""
    builtin = BuiltinDescriptors(SEED)
    child = variant(5, lines=2)
    before = builtin.values(child)
    for i in range(20):
        store(variant(i), cell=i, score=float(i), island=i % 2)
    assert builtin.values(child) == before
    assert BuiltinDescriptors(SEED).values(child) == before


def test_values_outside_the_ranges_fall_in_the_end_bins(plain_problem):
    problem = with_builtin_descriptors(plain_problem)
    builtin = BuiltinDescriptors(SEED)
    huge = builtin.values(variant(3, lines=60))
    assert huge["size"] > 4.4
    assert problem.cell_of(huge) // 10 == 10  # last size bin
    tiny = builtin.values("x = 1\n")
    assert tiny["size"] < -4.4
    assert problem.cell_of(tiny) // 10 == 0
    assert problem.cell_of({"size": 0.0, "distance": 5.0}) == 5 * 10 + 9


@given(st.integers(1, 5000), st.integers(0, 20000))
def test_size_is_monotonic_and_zero_only_at_the_seeds_count(seed, tokens):
    value = size_value(tokens, seed)
    assert (value == 0.0) == (tokens == seed)
    assert size_value(tokens + 1, seed) > value
    assert math.isfinite(value)
