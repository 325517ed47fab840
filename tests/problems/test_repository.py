"""Repository problems: a folder with an ``evoforge.toml`` becomes a problem of the ``repo``
evaluator; bad input is refused with one line, and nothing is written."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from evoforge.evolve.cli import cli
from evoforge.problems import measure_baselines, split_bundle
from evoforge.problems.adapters import adapt
from tests.repo_helpers import FMT, OPS, TOML, make_repo


def test_a_repository_becomes_a_bundle_problem(tmp_path):
    repo = make_repo(tmp_path / "calc")
    adapted = adapt(repo)
    assert adapted is not None and adapted.adapter == "repository"
    (problem,) = adapted.problems
    assert problem.evaluator == "repo" and problem.language == "python"
    assert split_bundle(problem.seed_source) == {"calc/ops.py": OPS, "calc/fmt.py": FMT}
    assert [o.name for o in problem.objectives] == ["size"]
    assert problem.options["check"] == "python check.py"
    assert any("evolved whole: calc/ops.py, calc/fmt.py" in n for n in adapted.notes)


def test_globs_pick_files_in_order_without_duplicates(tmp_path):
    repo = make_repo(
        tmp_path / "calc",
        toml=TOML.replace(
            'files = ["calc/ops.py", "calc/fmt.py"]', 'files = ["calc/ops.py", "calc/*.py"]'
        ),
    )
    (problem,) = adapt(repo).problems
    assert list(split_bundle(problem.seed_source)) == [
        "calc/ops.py",
        "calc/__init__.py",
        "calc/fmt.py",
    ]


def test_the_base_is_measured_as_the_baseline(tmp_path):
    repo = make_repo(tmp_path / "calc")
    (problem,) = adapt(repo).problems
    assert measure_baselines(problem) == {"base": {"size": float(len(OPS) + len(FMT))}}


BAD = {
    "no_toml": (None, "or a repository with an evoforge.toml"),
    "glob_matches_nothing": (
        {"toml": TOML.replace('"calc/fmt.py"', '"calc/nothing*.py"')},
        "files[1]: 'calc/nothing*.py' matches no file",
    ),
    "check_fails_at_base": (
        {"fmt": FMT.replace('"value="', '"v="')},
        "the repository's own tests fail before any change: check `python check.py` exited with 1",
    ),
    "measure_prints_no_json": (
        {"measure": "print('fast')\n"},
        "printed no JSON object on its last stdout line (it printed 'fast')",
    ),
    "unknown_field": ({"toml": TOML + 'chekc = "x"\n'}, "chekc"),
    "stage_unknown_key": (
        {"toml": TOML + '[[stages]]\nname = "smoke"\ncommand = "true"\ncommnd = "x"\n'},
        "stages.0.commnd",
    ),
    "stage_without_command": (
        {"toml": TOML + '[[stages]]\nname = "smoke"\n'},
        "stages.0.command",
    ),
    "stage_named_check": (
        {"toml": TOML + '[[stages]]\nname = "check"\ncommand = "true"\n'},
        "'check' is the name of the last stages",
    ),
    "two_stages_one_name": (
        {"toml": TOML + '[[stages]]\nname = "a"\ncommand = "true"\n' * 2},
        "stages[1].name: 'a' names two stages",
    ),
    "threshold_on_a_metric_no_stage_prints": (
        {
            "toml": TOML + '[[stages]]\nname = "quick"\ncommand = "python measure.py"\n'
            'threshold = { metric = "speed", min = 1 }\n'
        },
        "stage 'quick' `python measure.py` printed no metric 'speed'",
    ),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_input_is_one_line_and_nothing_is_written(tmp_path, case):
    overrides, message = BAD[case]
    if overrides is None:
        repo = tmp_path / "calc"
        make_repo(repo)
        (repo / "evoforge.toml").unlink()
    else:
        repo = make_repo(tmp_path / "calc", **overrides)
    db = tmp_path / "runs.db"
    result = CliRunner().invoke(cli, ["run", str(repo), "--budget", "2", "--db", str(db)])
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(lines) == 1 and message in lines[0], result.output
    assert not db.exists() and not os.path.exists(f"{db}-wal")
    assert "the repository's own tests" not in message or "v=3" in lines[0]


def test_the_description_summarises_the_rest_of_the_repository(tmp_path):
    repo = make_repo(tmp_path / "calc")
    (repo / "calc" / "util.py").write_text("def helper(a, b=1):\n    return a\n\n\nX = 1\n")
    (problem,) = adapt(repo).problems
    text = problem.description
    assert "  calc/ops.py *\n" in text and "  check.py\n" in text
    assert "calc/util.py:\n  def helper(a, b=1):" in text
    assert "def scale" not in text  # the evolving files are the program, not the summary


def test_descriptors_and_run_defaults_are_declared_in_the_toml(tmp_path):
    toml = TOML + "descriptors = { mark = [0, 10, 5] }\nrun_defaults = { budget = 7 }\n"
    (problem,) = adapt(make_repo(tmp_path / "calc", toml=toml)).problems
    assert [(d.name, d.low, d.high, d.bins) for d in problem.descriptors] == [("mark", 0, 10, 5)]
    assert problem.run_defaults == {"budget": 7}
