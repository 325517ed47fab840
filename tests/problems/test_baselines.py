"""Baselines: declared or measured reference values, stored per session, shown as ratios."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

import evoforge
from evoforge.evolve.cli import cli
from evoforge.problems import ProblemSpecError, load_problem, measure_baselines, versus
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC

SPEC = textwrap.dedent(TRIVIAL_SPEC)


def test_declared_and_measured_baselines_are_merged(make_problem, tmp_path):
    calls = tmp_path / "calls"
    spec = SPEC + textwrap.dedent(
        f"""
        import pathlib
        _CALLS = pathlib.Path({str(calls)!r})
        baselines_note = "measured below"
        def baselines():
            _CALLS.write_text((_CALLS.read_text() if _CALLS.exists() else "") + "x")
            return {{"measured": {{"score": -0.5}}}}
        """
    )
    problem = load_problem(make_problem(spec, TRIVIAL_SEED))
    assert problem.measures_baselines and problem.baselines == {}
    assert measure_baselines(problem) == {"measured": {"score": -0.5}}
    assert calls.read_text() == "x"  # measured when asked, not when loaded


def test_declared_baselines_are_checked_against_the_objectives(make_problem):
    bad = SPEC + 'baselines = {"stock": {"size": 3}}\n'
    with pytest.raises(ProblemSpecError, match="baseline 'stock' names size, which are not"):
        load_problem(make_problem(bad, TRIVIAL_SEED))
    zero = SPEC + 'baselines = {"stock": {"score": 0}}\n'
    with pytest.raises(ProblemSpecError, match="is 0 for score: no ratio"):
        load_problem(make_problem(zero, TRIVIAL_SEED, name="zero"))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("    raise OSError('no compiler')\n", r"baselines\(\): raised OSError: no compiler"),
        ("    return [1]\n", r"baselines\(\): returned list"),
        ("    return {'x': {'nope': 1.0}}\n", "names nope, which are not objectives"),
    ],
    ids=["raises", "not-a-dict", "unknown-objective"],
)
def test_a_broken_baselines_function_is_a_spec_error(make_problem, body, message):
    problem = load_problem(make_problem(SPEC + "def baselines():\n" + body, TRIVIAL_SEED))
    with pytest.raises(ProblemSpecError, match=message):
        measure_baselines(problem)


def test_ratios_in_the_summary_top_and_the_result(make_problem, tmp_path):
    spec = SPEC + 'baselines = {"reference": {"score": -2.0}}\n'
    folder = make_problem(spec, TRIVIAL_SEED)
    db = tmp_path / "b.db"
    result = evoforge.run(folder, budget=8, workers=1, db=db)
    assert result.baselines == {"reference": {"score": -2.0}}
    expected = f"score {result.best.objectives['score'] / -2.0:.4g}×"
    assert versus(result.best.objectives, result.baselines) == [("reference", expected)]
    top = CliRunner().invoke(cli, ["top", "--db", str(db), "-n", "1"])
    assert f"[vs reference: {expected}]" in top.output
    summary = CliRunner().invoke(cli, ["run", str(folder), "--budget", "4", "-q", "--db", str(db)])
    assert "Best vs reference: score " in summary.output


def test_circle_packing_reports_against_the_published_bests():
    problem = load_problem(evoforge.problems.__path__[0] + "/builtin/circle_packing")
    assert measure_baselines(problem)["AlphaEvolve (2025)"] == {"sum_radii": 2.6358627564}
