"""A repository run end to end: a two-file change proposed, evaluated, stored, exported as a
patch that applies to a clean clone and passes the check there, and committed on a branch."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from evoforge.archive import Archive
from evoforge.evaluators import Status
from evoforge.evolve import RunConfig, start_run
from evoforge.evolve.cli import cli
from tests.repo_helpers import git, make_repo, tree_digest

TWO_FILES = """I shorten both modules.
calc/fmt.py
<<<<<<< SEARCH
    return "value=" + str(x)
=======
    return f"value={x}"
>>>>>>> REPLACE

calc/ops.py
<<<<<<< SEARCH
    return x * 2
=======
    return 2*x
>>>>>>> REPLACE
"""


@pytest.fixture
def finished_run(tmp_path, scripted):
    repo = make_repo(tmp_path / "calc")
    before = tree_digest(repo)
    scripted["two"] = [TWO_FILES]
    db = tmp_path / "runs.db"
    config = RunConfig(problem=str(repo), budget=2, workers=1, model="scripted/two")
    info, report = asyncio.run(start_run(config, db))
    assert report.status == "finished"
    return repo, db, info.id, before


def test_a_two_file_change_is_stored_exported_and_applies_to_a_clean_clone(finished_run, tmp_path):
    repo, db, run_id, before = finished_run
    assert tree_digest(repo) == before  # the run never touched the repository
    with Archive(db) as archive:
        seed, child = list(archive.programs(run_id))
    assert child.status is Status.OK and child.objectives["size"] < seed.objectives["size"]

    diff = CliRunner().invoke(cli, ["show", child.id, "--db", str(db), "--diff"])
    assert "diff --git a/calc/fmt.py b/calc/fmt.py" in diff.output
    assert "diff --git a/calc/ops.py b/calc/ops.py" in diff.output

    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["export", run_id, "--best", "1", str(out), "--db", str(db)])
    assert result.exit_code == 0, result.output
    (patch,) = out.glob("*.patch")
    text = patch.read_text()
    assert f"program {child.id}" in text and "ratio to base" in text
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    git(clone, "apply", str(patch))
    assert 'f"value={x}"' in (clone / "calc" / "fmt.py").read_text()
    assert "2*x" in (clone / "calc" / "ops.py").read_text()
    check = subprocess.run([sys.executable, "check.py"], cwd=clone, capture_output=True)
    assert check.returncode == 0, check.stderr


def test_apply_commits_the_patch_on_a_new_branch_and_leaves_the_work_tree(finished_run, tmp_path):
    repo, db, run_id, before = finished_run
    args = ["export", run_id, "--best", "1", str(tmp_path / "out"), "--db", str(db)]
    result = CliRunner().invoke(cli, [*args, "--apply", "faster"])
    assert result.exit_code == 0, result.output
    assert "on branch faster" in result.output
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert git(repo, "status", "--porcelain") == ""
    assert "2*x" in git(repo, "show", "faster:calc/ops.py")
    assert git(repo, "rev-parse", "faster~1") == git(repo, "rev-parse", "main")
    assert "evoforge patch" in git(repo, "log", "-1", "--format=%B", "faster")
    again = CliRunner().invoke(cli, [*args, "--force", "--apply", "faster"])
    assert again.exit_code != 0 and "already exists" in again.output


def test_apply_works_for_a_repository_in_a_subfolder_of_a_git_repository(tmp_path, scripted):
    outer = tmp_path / "outer"
    sub = make_repo(outer / "sub")
    shutil.rmtree(sub / ".git")
    git(outer, "init", "-q", "-b", "main")
    git(outer, "add", "-A")
    git(outer, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    scripted["two"] = [TWO_FILES]
    db = tmp_path / "runs.db"
    config = RunConfig(problem=str(sub), budget=2, workers=1, model="scripted/two")
    info, _ = asyncio.run(start_run(config, db))
    args = ["export", info.id, "--best", "1", str(tmp_path / "out"), "--db", str(db)]
    result = CliRunner().invoke(cli, [*args, "--apply", "shorter"])
    assert result.exit_code == 0, result.output
    assert "2*x" in git(outer, "show", "shorter:sub/calc/ops.py")
    assert git(outer, "status", "--porcelain") == ""


def test_apply_refuses_when_the_best_program_is_the_base(tmp_path, scripted):
    repo = make_repo(tmp_path / "calc")
    scripted["worse"] = ["no edit at all"]
    db = tmp_path / "runs.db"
    config = RunConfig(problem=str(repo), budget=1, workers=1, model="scripted/worse")
    info, _ = asyncio.run(start_run(config, db))
    args = ["export", info.id, "--best", "1", str(tmp_path / "out"), "--db", str(db)]
    result = CliRunner().invoke(cli, [*args, "--apply", "same"])
    assert result.exit_code != 0 and "unchanged repository: nothing to commit" in result.output
    assert git(repo, "branch", "--list", "same") == ""
