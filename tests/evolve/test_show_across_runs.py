"""``evoforge show`` in an archive of several runs of one problem: the seed (the same program
in every run) is the latest run's, RUN:ID picks another, and with ``--json`` errors are JSON."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from evoforge.archive import Archive
from evoforge.evolve.cli import cli
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("show")
    (folder / "tiny").mkdir()
    (folder / "tiny" / "problem.py").write_text(TRIVIAL_SPEC.replace("\n    ", "\n"))
    (folder / "tiny" / "seed.py").write_text(TRIVIAL_SEED.replace("\n    ", "\n"))
    db = folder / "two.db"
    for seed in ("1", "2"):
        args = ["run", str(folder / "tiny"), "--budget", "3", "--workers", "1", "--seed", seed]
        result = CliRunner().invoke(cli, [*args, "--db", str(db), "-q"])
        assert result.exit_code == 0, result.output
    with Archive(db) as archive:
        runs = [r.id for r in archive.runs()]
        first, latest = sorted(runs, key=lambda r: archive.run(r).created_at)
        seed_id = next(iter(archive.programs(first))).id
    return db, first, latest, seed_id


def _show(db, *args):
    return CliRunner().invoke(cli, ["show", *args, "--db", str(db)])


def test_a_seed_in_several_runs_is_shown_from_the_latest_and_says_so(two_runs):
    db, first, latest, seed_id = two_runs
    result = _show(db, seed_id)
    assert result.exit_code == 0, result.output
    assert f"program {seed_id}  run {latest}" in result.output
    assert f"is in 2 runs; showing the latest, {latest} (others: {first}" in result.output
    data = json.loads(_show(db, seed_id[:6], "--json").output)
    assert data["run_id"] == latest and data["id"] == seed_id


def test_run_colon_id_and_run_choose_the_run(two_runs):
    db, first, _, seed_id = two_runs
    data = json.loads(_show(db, f"{first}:{seed_id}", "--json").output)
    assert data["run_id"] == first
    data = json.loads(_show(db, seed_id, "--run", first, "--json").output)
    assert data["run_id"] == first


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("ffffffffffff", "no program id starting with 'ffffffffffff'"),
        ("no-such-run:abcd", "no-such-run"),
        ("", "no program id given"),
    ],
)
def test_with_json_errors_are_json(two_runs, ref, message):
    db, *_ = two_runs
    result = _show(db, ref, "--json")
    assert result.exit_code == 1
    assert message in json.loads(result.output)["error"]


def test_a_missing_archive_with_json_is_a_json_error(tmp_path):
    result = CliRunner().invoke(cli, ["show", "abcd", "--db", str(tmp_path / "none.db"), "--json"])
    assert result.exit_code == 1 and "error" in json.loads(result.output)
