"""``evoforge new FOLDER --kind KIND``: a problem folder of each kind that runs as written,
whose own test passes, and that never overwrites anything."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evoforge.archive import Archive, Status
from evoforge.evolve.cli import cli
from evoforge.problems import (
    SCAFFOLD_KINDS,
    ScaffoldError,
    find_blocks,
    import_spec,
    load_problem,
    scaffold,
)
from evoforge.problems.adapters import adapt
from tests.conftest import ROOT

# What each kind needs on this host to run, with how to get it; absent, its end-to-end tests
# skip and say so. The repo kind's check and measure commands call `python`, as written.
NEEDS = {
    "python": {},
    "native": {"clang-19": "apt-get install -y clang-19"},
    "repo": {"python": "a virtual environment, or apt-get install -y python-is-python3"},
    "kernel": {},
}
SEEDS = {"python": "seed.py", "native": "seed.c", "kernel": "seed.py"}


def missing(kind: str) -> str:
    """Why ``kind``'s scaffold cannot run here ("" when it can)."""
    absent = [f"{tool} ({how})" for tool, how in NEEDS[kind].items() if not shutil.which(tool)]
    if absent:
        return f"needs {', '.join(absent)} on PATH"
    if kind == "kernel" and importlib.util.find_spec("triton") is None:
        return "needs torch and triton (pip install 'evoforge[torch]')"
    return ""


def evoforge(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real command in a real process (PYTHONPATH: this checkout)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "evoforge", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


# --- what is written ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", SCAFFOLD_KINDS)
def test_each_kind_is_a_problem_with_a_seed_and_a_test(tmp_path, kind):
    folder = tmp_path / "my-problem"
    written = scaffold(folder, kind)
    assert written and all(path.is_file() for path in written)
    assert (folder / "test_my_problem.py") in written
    for path in written:
        text = path.read_text()
        assert "__NAME__" not in text and "__FOLDER__" not in text, path
        assert "__NAME__" not in str(path) and not path.name.endswith(".tmpl")
    if kind == "repo":
        adapted = adapt(folder)
        assert adapted is not None
        (problem,) = adapted.problems
        assert problem.name == "my_problem" and problem.evaluator == "repo"
        assert find_blocks((folder / "my_problem" / "core.py").read_text())
        return
    problem = load_problem(folder)
    assert problem.name == "my_problem"
    assert problem.evaluator == {"kernel": "triton"}.get(kind, kind)
    assert callable(import_spec(problem.spec_path).evaluate)
    assert find_blocks((folder / SEEDS[kind]).read_text())


def test_the_python_scaffold_scores_its_seed_and_refuses_nonsense(tmp_path):
    scaffold(tmp_path / "points", "python")
    evaluate = import_spec(tmp_path / "points" / "problem.py").evaluate
    grid = [(x / 2, y / 2) for x in range(3) for y in range(3)][:8]
    assert evaluate(grid) == {"correct": True, "min_distance": 0.5}
    assert evaluate([[float("nan"), 0], *grid[1:]])["correct"] is False
    assert evaluate(None)["correct"] is False


def test_a_folder_that_is_not_empty_is_refused_and_left_alone(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(ScaffoldError, match="exists and is not empty"):
        scaffold(folder, "python")
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    (tmp_path / "file").write_text("")
    with pytest.raises(ScaffoldError, match="is a file"):
        scaffold(tmp_path / "file", "native")


def test_an_empty_folder_is_filled(tmp_path):
    (tmp_path / "empty").mkdir()
    assert scaffold(tmp_path / "empty", "python")


@pytest.mark.parametrize(
    ("folder", "name", "error"),
    [
        ("2d-packing", None, ""),  # becomes p_2d_packing
        ("x", "not an identifier", "is not an identifier"),
        ("x", "class", "is not an identifier"),
    ],
    ids=["made-from-folder", "spaces", "keyword"],
)
def test_names(tmp_path, folder, name, error):
    if error:
        with pytest.raises(ScaffoldError, match=error):
            scaffold(tmp_path / folder, "python", name=name)
        assert not (tmp_path / folder).exists()
        return
    scaffold(tmp_path / folder, "python", name=name)
    assert load_problem(tmp_path / folder).name == "p_2d_packing"


def test_the_command_says_what_it_wrote_and_refuses_with_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(cli, ["new", "sums", "--kind", "repo"])
    assert done.exit_code == 0, done.output
    assert "sums/core.py" in done.output and "evoforge run sums --budget 50" in done.output
    again = CliRunner().invoke(cli, ["new", "sums"])
    assert again.exit_code == 1
    assert again.output.startswith("Error: sums exists and is not empty"), again.output
    unknown = CliRunner().invoke(cli, ["new", "other", "--kind", "fortran"])
    assert unknown.exit_code == 2 and "'fortran' is not one of" in unknown.output


def test_the_templates_are_package_data():
    """pyproject's package-data globs cover every template (else a wheel ships none)."""
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    globs = data["package-data"]["evoforge.problems"]
    templates = ROOT / "problems" / "templates"
    files = [p.relative_to(ROOT / "problems") for p in templates.rglob("*") if p.is_file()]
    assert files
    uncovered = [f for f in files if not any(f.match(pattern) for pattern in globs)]
    assert uncovered == []


# --- as a user runs it: the command, then the run, then the folder's own test -------------


@pytest.mark.slow  # each kind: a run of 3 evaluations, then the folder's test runs one too
@pytest.mark.parametrize("kind", SCAFFOLD_KINDS)
def test_new_then_run_ends_with_an_ok_seed_and_the_folder_s_test_passes(tmp_path, kind):
    if why := missing(kind):
        pytest.skip(why)
    made = evoforge("new", "fresh", "--kind", kind, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    db = tmp_path / "runs.db"
    ran = evoforge("run", "fresh", "--budget", 3, "--seed", 1, "--db", db, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    with Archive(db) as archive:
        run = archive.latest_run()
        assert run is not None and run.status == "finished", run
        seed = next(archive.programs(run.id))
    assert seed.status is Status.OK, seed.artifacts
    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "fresh"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert tested.returncode == 0, tested.stdout[-3000:] + tested.stderr[-2000:]
    assert " passed" in tested.stdout and "skipped" not in tested.stdout, tested.stdout
