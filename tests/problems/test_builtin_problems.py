"""The built-in problems: specs load, seeds score as documented, evaluators reject bad answers.

Seeds run in-process here; their answers go through the same JSON round trip as the sandbox's.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import evoforge.problems
from evoforge.problems import load_problem
from evoforge.problems._loader import import_spec

BUILTIN = Path(evoforge.problems.__file__).resolve().parent / "builtin"
PACKING_DIR, TRIVIAL_DIR = BUILTIN / "circle_packing", BUILTIN / "trivial"
PACKING_32_DIR = BUILTIN / "circle_packing_32"
N, TOL = 26, 1e-9
SEED_SUM_RADII = 2.2404964527183537  # the circle_packing README quotes this (2.2405)


@pytest.fixture(scope="module")
def packing():
    return import_spec(PACKING_DIR / "problem.py")


@pytest.fixture(scope="module")
def trivial():
    return import_spec(TRIVIAL_DIR / "problem.py")


def transported(value):
    """What the engine's JSON transport delivers: numpy arrays and scalars become plain values."""
    return json.loads(json.dumps(value, default=lambda obj: obj.tolist()))


def run_seed(folder: Path):
    problem = load_problem(folder)
    seed = import_spec(folder / "seed.py")
    return transported(getattr(seed, problem.entry)())


def spaced() -> dict:
    """A valid packing with room everywhere: r = 0.05 on a 6-wide grid (pitch 0.16 by 0.2)."""
    centers = [[0.1 + 0.16 * (k % 6), 0.1 + 0.2 * (k // 6)] for k in range(N)]
    return {"centers": centers, "radii": [0.05] * N}


def touching() -> dict:
    """A valid packing full of exact tangencies, all in dyadic numbers (no rounding anywhere).

    Two r = 1/4 circles sit on the floor, touching each other and three walls; above them three
    rows of eight r = 1/16 circles touch each other, the side walls and the big circles.
    """
    centers = [[0.25, 0.25], [0.75, 0.25]]
    centers += [[0.0625 + 0.125 * k, 0.5625 + 0.125 * m] for m in range(3) for k in range(8)]
    return {"centers": centers, "radii": [0.25, 0.25] + [0.0625] * 24}


# ---------------------------------------------------------------------------- loading and seeds


@pytest.mark.parametrize("folder", [PACKING_DIR, PACKING_32_DIR, TRIVIAL_DIR], ids=lambda p: p.name)
def test_builtin_problem_loads_with_declared_descriptors(folder):
    problem = load_problem(folder)

    assert problem.name == folder.name
    assert len(problem.objectives) == 1
    assert all(8 <= d.bins <= 10 for d in problem.descriptors)
    assert len(problem.descriptors) == 2


def test_circle_packing_limits():
    problem = load_problem(PACKING_DIR)

    assert problem.primary.name == "sum_radii" and problem.primary.direction == "maximize"
    assert problem.preload == ("numpy",)
    assert (problem.timeout_s, problem.memory_mb) == (10.0, 1024)


def test_trivial_limits():
    problem = load_problem(TRIVIAL_DIR)

    assert problem.primary.name == "score" and problem.primary.direction == "maximize"
    assert problem.preload == ()
    assert (problem.timeout_s, problem.memory_mb) == (5.0, 512)
    assert [(d.name, d.low, d.high, d.bins) for d in problem.descriptors] == [
        ("a", -10.0, 10.0, 10),
        ("b", -10.0, 10.0, 10),
    ]


def test_circle_packing_seed_is_valid_and_scores_as_documented(packing):
    result = packing.evaluate(run_seed(PACKING_DIR))

    assert result["correct"] is True, result.get("error")
    assert result["sum_radii"] == pytest.approx(SEED_SUM_RADII, abs=1e-9)
    assert result["n_valid"] == N
    for descriptor in load_problem(PACKING_DIR).descriptors:
        assert descriptor.low <= result[descriptor.name] < descriptor.high


def test_circle_packing_seed_runs_within_50_ms():
    seed = import_spec(PACKING_DIR / "seed.py")
    seed.main()  # warm-up
    best = min(_timed(seed.main) for _ in range(5))

    assert best < 0.05


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


rows = st.lists(
    st.tuples(st.integers(0, 9), st.floats(-0.5, 1.5), st.floats(-0.5, 1.5), st.floats(-0.5, 1.5)),
    max_size=7,
)


@settings(max_examples=40, deadline=None)
@given(
    rows=rows,
    grow_passes=st.integers(0, 3),
    relax=st.tuples(
        st.integers(0, 60),  # steps
        st.floats(0.0, 10.0),  # step size, up to absurdly large
        st.floats(0.0, 1.5),  # step-size decay
        st.floats(0.0, 1e6),  # penalty
        st.floats(0.5, 2.0),  # penalty growth
    ),
)
def test_circle_packing_seed_stays_valid_under_any_row_edit(packing, rows, grow_passes, relax):
    """The seed's claim: any edit of ROWS / GROW_PASSES or of the relaxation's constants that
    runs still yields a valid packing."""
    seed = import_spec(PACKING_DIR / "seed.py")
    seed.ROWS, seed.GROW_PASSES = rows, grow_passes
    seed.RELAX_STEPS, seed.RELAX_LR, seed.LR_DECAY, seed.PENALTY, seed.PENALTY_GROWTH = relax

    result = packing.evaluate(transported(seed.main()))

    assert result["correct"] is True, result.get("error")


def test_trivial_seed_scores_as_documented(trivial):
    result = trivial.evaluate(run_seed(TRIVIAL_DIR))

    assert result == {"correct": True, "score": pytest.approx(-7.78), "a": 1.0, "b": -0.5}


# ------------------------------------------------------------------- circle packing: accepted


def test_exact_tangency_is_valid(packing):
    result = packing.evaluate(touching())

    assert result == {
        "correct": True,
        "sum_radii": 2.0,
        "n_valid": N,
        "radius_cv": statistics.pstdev(touching()["radii"]) / (2.0 / N),
        "border_fraction": 8 / N,
    }


def test_overlap_within_tolerance_is_valid(packing):
    packing_ = spaced()
    packing_["centers"][1][0] = packing_["centers"][0][0] + 0.1 - 5e-10

    assert packing.evaluate(packing_)["correct"] is True


def test_numpy_arrays_are_accepted(packing):
    answer = {k: np.asarray(v) for k, v in spaced().items()}

    result = packing.evaluate(answer)

    assert result["correct"] is True
    assert result["sum_radii"] == pytest.approx(1.3)


# ------------------------------------------------------------------- circle packing: rejected


def _edit(**changes):
    """A factory for ``spaced()`` with changes applied by the given callables."""

    def make():
        answer = spaced()
        for key, change in changes.items():
            answer[key] = change(answer[key])
        return answer

    return make


def _set(index, value, coordinate=None):
    def change(values):
        if coordinate is None:
            values[index] = value
        else:
            values[index][coordinate] = value
        return values

    return change


def _deep(depth: int) -> list:
    nested: list = []
    for _ in range(depth):
        nested = [nested]
    return nested


INVALID_PACKINGS = [
    # (id, factory, fragment the error must contain)
    (
        "overlap by 1e-8",
        _edit(centers=_set(1, 0.1 + 0.1 - 1e-8, 0)),
        "circles 0 and 1 overlap by 1.000e-08",
    ),
    (
        "outside by 1e-8",
        _edit(centers=_set(5, 1 - 0.05 + 1e-8, 0)),
        "circle 5 sticks out of the right side of the square by 1.000e-08",
    ),
    (
        "25 circles",
        _edit(centers=lambda c: c[:25], radii=lambda r: r[:25]),
        "centers has 25 entries; expected exactly 26",
    ),
    (
        "27 circles",
        _edit(centers=lambda c: c + [[0.5, 0.5]], radii=lambda r: r + [0.0]),
        "centers has 27 entries; expected exactly 26",
    ),
    ("radii 27 long", _edit(radii=lambda r: r + [0.0]), "radii has 27 entries"),
    ("nan coordinate", _edit(centers=_set(3, math.nan, 1)), "centers[3][1] is not finite"),
    ("inf radius", _edit(radii=_set(4, math.inf)), "radii[4] is not finite"),
    ("-inf coordinate", _edit(centers=_set(0, -math.inf, 0)), "centers[0][0] is not finite"),
    ("negative radius", _edit(radii=_set(7, -1e-3)), "circle 7 has negative radius -1.000e-03"),
    ("huge int", _edit(radii=_set(2, 10**400)), "radii[2] is too large"),
    ("string radius", _edit(radii=_set(2, "0.05")), "radii[2] must be a number, got str"),
    ("bool coordinate", _edit(centers=_set(2, True, 0)), "centers[2][0] must be a number"),
    ("center triple", _edit(centers=_set(6, [0.5, 0.5, 0.5])), "centers[6] must be a pair"),
    ("center is a number", _edit(centers=_set(6, 0.5)), "centers[6] must be a pair"),
    ("radii is a string", _edit(radii=lambda r: "0.05" * 26), "radii must be a list"),
    ("radii is a dict", _edit(radii=lambda r: dict(enumerate(r))), "radii must be a list"),
    ("string", lambda: "circles", "expected a dict"),
    ("None", lambda: None, "expected a dict"),
    ("number", lambda: 2.63598, "expected a dict"),
    ("list of both", lambda: [spaced()["centers"], spaced()["radii"]], "expected a dict"),
    (
        "nested garbage",
        lambda: {"centers": _deep(100_000), "radii": _deep(100_000)},
        "centers has 1 entries",
    ),
    ("nested garbage center", _edit(centers=_set(0, _deep(10_000))), "centers[0] must be a pair"),
    ("missing radii", lambda: {"centers": spaced()["centers"]}, "dict is missing 'radii'"),
    ("empty dict", lambda: {}, "dict is missing 'centers' and 'radii'"),
    (
        "1e6-long list",
        _edit(centers=lambda c: [[0.5, 0.5]] * 1_000_000),
        "centers has 1000000 entries",
    ),
]


@pytest.mark.parametrize(
    ("make", "fragment"),
    [case[1:] for case in INVALID_PACKINGS],
    ids=[case[0] for case in INVALID_PACKINGS],
)
def test_invalid_packing_is_rejected_with_a_precise_error(packing, make, fragment):
    result = packing.evaluate(make())

    assert result["correct"] is False
    assert fragment in result["error"]
    assert "sum_radii" not in result  # an invalid packing can never be ranked
    assert "internal evaluator error" not in result["error"]


def test_error_counts_every_violation_and_n_valid_excludes_them(packing):
    answer = spaced()
    answer["radii"][0] = answer["radii"][6] = 0.15  # 0 and 6 overlap; both stick out

    result = packing.evaluate(answer)

    assert result["correct"] is False
    assert "circles 0 and 6 overlap by 1.000e-01" in result["error"]
    assert "sticks out" in result["error"]
    assert result["n_valid"] == N - 4  # 0, 6 and their right-hand neighbours 1 and 7


# ------------------------------------------------------------- circle packing: properties


@st.composite
def grid_packings(draw):
    """Random valid packings: each circle inside its own cell of a 6 x 5 grid, so none overlap."""
    cell_w, cell_h = 1 / 6, 1 / 5
    radii = draw(st.lists(st.floats(0.0, 0.08), min_size=N, max_size=N))
    jitter = draw(st.lists(st.tuples(st.floats(-1, 1), st.floats(-1, 1)), min_size=N, max_size=N))
    centers = []
    for k, (r, (jx, jy)) in enumerate(zip(radii, jitter, strict=True)):
        cx, cy = (k % 6 + 0.5) * cell_w, (k // 6 + 0.5) * cell_h
        room = cell_w / 2 - r - 1e-12  # the narrower side of the cell, less a rounding margin
        centers.append([cx + jx * room, cy + jy * room])
    return {"centers": centers, "radii": radii}


@settings(max_examples=60)
@given(answer=grid_packings())
def test_random_valid_packing_validates_and_reports_its_exact_sum(packing, answer):
    result = packing.evaluate(transported(answer))

    assert result["correct"] is True, result["error"]
    assert result["sum_radii"] == math.fsum(answer["radii"])
    assert result["n_valid"] == N


@settings(max_examples=60)
@given(
    answer=grid_packings(),
    pair=st.integers(0, 24).filter(lambda k: k % 6 != 5),
    overlap=st.floats(2e-9, 0.01),
    r=st.floats(0.01, 0.08),
)
def test_pushing_one_pair_into_overlap_is_rejected(packing, answer, pair, overlap, r):
    i, j = pair, pair + 1  # neighbours in the same row of the grid
    answer["radii"][i] = answer["radii"][j] = r
    answer["centers"][i] = [(i % 6 + 0.5) / 6, (i // 6 + 0.5) / 5]
    answer["centers"][j] = [answer["centers"][i][0] + 2 * r - overlap, answer["centers"][i][1]]

    result = packing.evaluate(transported(answer))

    assert result["correct"] is False
    assert result["error"].startswith(f"circles {i} and {j} overlap by")


# ------------------------------------------------------------------------------------ trivial


def test_trivial_optimum_scores_zero(trivial):
    assert trivial.evaluate([3.7, -1.2]) == {"correct": True, "score": 0.0, "a": 3.7, "b": -1.2}


def test_trivial_accepts_numpy_and_tuples(trivial):
    assert trivial.evaluate(np.array([3.7, -0.2]))["score"] == pytest.approx(-1.0)
    assert trivial.evaluate((np.float64(4.7), np.int64(-1)))["score"] == pytest.approx(-1.04)


TRIVIAL_HOSTILE = [
    ("None", None, "expected [a, b]"),
    ("string", "3.7,-1.2", "expected [a, b]"),
    ("one value", [3.7], "expected [a, b]"),
    ("three values", [3.7, -1.2, 0.0], "expected [a, b]"),
    ("dict", {"a": 3.7, "b": -1.2}, "expected [a, b]"),
    ("nan", [math.nan, -1.2], "a is not finite"),
    ("inf", [3.7, math.inf], "b is not finite"),
    ("bool", [True, -1.2], "a must be a number"),
    ("string value", [3.7, "-1.2"], "b must be a number"),
    ("nested", [[3.7], [-1.2]], "a must be a number"),
    ("huge int", [10**400, 0], "a is too large"),
    ("overflowing score", [1e200, 0.0], "score overflows"),
    ("1e6-long list", [0.0] * 1_000_000, "expected [a, b]"),
]


@pytest.mark.parametrize(
    ("output", "fragment"),
    [case[1:] for case in TRIVIAL_HOSTILE],
    ids=[case[0] for case in TRIVIAL_HOSTILE],
)
def test_trivial_rejects_hostile_output(trivial, output, fragment):
    result = trivial.evaluate(output)

    assert result["correct"] is False
    assert fragment in result["error"]
    assert "score" not in result


# ------------------------------------------------------------------------- circle packing, n = 32


def test_circle_packing_32_checks_32_circles_and_reports_the_published_bests():
    from evoforge.problems import measure_baselines

    spec = import_spec(PACKING_32_DIR / "problem.py")
    metrics = spec.evaluate(run_seed(PACKING_32_DIR))
    assert metrics["correct"] and metrics["n_valid"] == 32 and 1.5 < metrics["sum_radii"] < 3.0
    assert "expected exactly 32" in spec.evaluate(spaced())["error"]  # 26 circles: refused
    assert measure_baselines(load_problem(PACKING_32_DIR)) == {
        "AlphaEvolve (2025)": {"sum_radii": 2.937945},
        "best open result": {"sum_radii": 2.939540},
    }
