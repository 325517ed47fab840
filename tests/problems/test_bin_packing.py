"""FunSearch's online bin packing: instances, the L1 bound, the strict online check, the seed,
the baselines, and (slow) an offline run that improves on its seed."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import evoforge
from evoforge.evolve.cli import cli
from evoforge.problems import load_problem, measure_baselines
from evoforge.problems._loader import import_spec
from evoforge.problems.classic import (
    best_fit,
    check_online,
    datasets,
    excess,
    first_fit,
    l1_bound,
    pack_online,
)

FOLDER = Path(evoforge.problems.__file__).resolve().parent / "builtin" / "bin_packing"


@pytest.fixture(scope="module")
def spec():
    return import_spec(FOLDER / "problem.py")


@pytest.fixture(scope="module")
def seed_output(spec):
    """The seed's answer, through the same JSON round trip as the sandbox's."""
    seed = import_spec(FOLDER / "seed.py")
    return json.loads(json.dumps(seed.main(spec.TRAINING, spec.HELD_OUT)))


def test_instances_are_the_same_every_time_and_have_their_distributions():
    training, again = datasets(), datasets()
    assert training == again
    assert set(training) == {"or1", "or2", "or3", "or4", "weibull_5k"}
    assert [len(training[n]["instances"][0]) for n in training] == [120, 250, 500, 1000, 5000]
    items = [
        i for n in ("or1", "or2", "or3", "or4") for inst in training[n]["instances"] for i in inst
    ]
    assert min(items) >= 20 and max(items) <= 100 and training["or1"]["capacity"] == 150
    weibull = np.array(training["weibull_5k"]["instances"]).ravel()
    assert weibull.min() >= 1 and weibull.max() <= 100 and 35 < weibull.mean() < 45
    held_out = datasets(held_out=True)
    assert held_out["or1"]["instances"][0] != training["or1"]["instances"][0]


def test_the_stored_instances_are_the_generators(spec):
    """The spec reads its instances from instances.json (so listing problems does not import
    numpy); they must be what the generator makes. Regenerate after changing it with
    json.dumps({"training": datasets(), "held_out": datasets(held_out=True)})."""
    assert spec.TRAINING == datasets()
    assert spec.HELD_OUT == datasets(held_out=True)


def test_the_l1_bound_rounds_up():
    assert l1_bound([50, 50, 50], 100) == 2 and l1_bound([100, 100], 100) == 2


@pytest.mark.parametrize(
    ("items", "assignment", "message"),
    [
        ([40, 70, 60], [0, 0, 1], r"item 1 \(size 70\) does not fit in bin 0 \(room 60 of 100\)"),
        ([40, 60, 60], [0, 1, 1], r"item 1 \(size 60\) opened bin 1 although bin 0 had room 60"),
        ([40, 60, 60], [0, 2, 1], r"item 1: bin 2 is not open .* a new bin must be number 1"),
        ([40, 60, 60], [0, 0], r"expected 3 bin indices"),
        ([40, 60, 60], [0, True, 1], r"item 1: bin index True is not a whole number"),
    ],
    ids=["overfilled", "needless-new-bin", "skipped-bin", "too-short", "bool-index"],
)
def test_a_packing_that_is_not_online_and_valid_is_rejected(items, assignment, message):
    used, error = check_online(items, 100, assignment)
    assert used == 0
    assert error and re.search(message, error), error
    assert check_online([40, 60, 60], 100, [0, 0, 1]) == (2, "")  # exactly full is fine


def test_first_fit_and_best_fit_pack_validly():
    items = datasets()["or2"]["instances"][0]
    for priority in (first_fit, best_fit):
        assignment = pack_online(items, 150, priority)
        used, error = check_online(items, 150, assignment)
        assert not error and used >= l1_bound(items, 150)


def test_the_seed_is_valid_and_worse_than_best_fit(spec, seed_output):
    metrics = spec.evaluate(seed_output)
    assert metrics.get("correct", True), metrics
    measured = spec.baselines()
    assert metrics["excess_pct"] > measured["best-fit (measured here)"]["excess_pct"]
    for name in ("or1", "or2", "or3", "or4", "weibull_5k"):
        assert math.isfinite(metrics[f"{name}_excess_pct"])
        assert math.isfinite(metrics[f"heldout_{name}_excess_pct"])
    assert "heldout_excess_pct" in metrics and "or_excess_pct" in metrics


def test_a_tampered_answer_is_rejected_with_where(spec, seed_output):
    broken = json.loads(json.dumps(seed_output))
    broken["training"]["or3"][1][5] = 10_000
    metrics = spec.evaluate(broken)
    assert metrics["correct"] is False
    assert metrics["error"].startswith("training or3, instance 1: item 5: bin 10000 is not open")
    assert "excess_pct" not in metrics  # never ranked
    assert spec.evaluate(["not", "a", "dict"])["correct"] is False


def test_evaluate_and_the_baselines_agree_on_first_fit(spec):
    packed = {
        part: {
            name: [pack_online(items, data["capacity"], first_fit) for items in data["instances"]]
            for name, data in sets.items()
        }
        for part, sets in (("training", spec.TRAINING), ("held_out", spec.HELD_OUT))
    }
    metrics = spec.evaluate(packed)
    measured = spec.baselines()["first-fit (measured here)"]
    assert metrics["excess_pct"] == pytest.approx(measured["excess_pct"])
    assert metrics["weibull_5k_excess_pct"] == pytest.approx(measured["weibull_5k_excess_pct"])
    pct, _, error = excess(spec.TRAINING["or3"], packed["training"]["or3"])
    assert not error and pct == pytest.approx(measured["or3_excess_pct"])


def test_published_figures_are_shown_beside_the_measured_baselines():
    baselines = measure_baselines(load_problem(FOLDER))
    assert baselines["FunSearch, published"] == {
        "weibull_5k_excess_pct": 0.68,
        "or3_excess_pct": 3.11,
    }
    assert baselines["best-fit, published (FunSearch paper)"]["weibull_5k_excess_pct"] == 3.98
    measured = baselines["best-fit (measured here)"]
    assert 3.0 < measured["weibull_5k_excess_pct"] < 5.0  # close to the published 3.98
    assert baselines["first-fit (measured here)"]["excess_pct"] > measured["excess_pct"]


@pytest.mark.slow
def test_an_offline_run_improves_on_the_seed_and_reports_the_baselines(tmp_path):
    db = tmp_path / "bp.db"
    args = ["run", "bin_packing", "--budget", "24", "--workers", "1", "--seed", "3", "-q"]
    result = CliRunner().invoke(cli, [*args, "--db", str(db)])
    assert result.exit_code == 0, result.output
    with evoforge.open_archive(db) as archive:
        run = archive.latest_run()
        programs = list(archive.programs(run.id))
        best = archive.get_program(run.id, run.best_program_id)
    seed = programs[0]
    assert best.objectives["excess_pct"] < seed.objectives["excess_pct"]
    out = result.output
    assert "Best vs best-fit (measured here): excess_pct" in out
    assert "Best vs FunSearch, published: weibull_5k_excess_pct" in out
    assert "first-fit (measured here): excess_pct=" in out
