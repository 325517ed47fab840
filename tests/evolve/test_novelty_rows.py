"""Candidates rejected by the novelty filter (status ``duplicate``): counted and labelled by
``evoforge stats`` and the dashboard, and never picked for repair."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from evoforge.archive import Archive, Program, program_id, repairable_failures
from evoforge.evaluators import Status
from evoforge.evolve.cli import cli
from evoforge.evolve.mining import STATUS_LABELS, run_stats
from evoforge.evolve.prompts import ModeConfig, pick_repair
from evoforge.islands import NoveltyFilter, ast_key
from evoforge.problems import Objective, Problem

SEED = "def main():\n    return 1\n"


def _problem(folder: Path) -> Problem:
    return Problem(
        name="dup",
        spec_path=folder / "problem.py",
        seed_source=SEED,
        objectives=(Objective("score"),),
    )


@pytest.fixture
def filled(tmp_path: Path):
    """A run with an ok seed, a runtime error and a rejected near-twin of the seed."""
    problem = _problem(tmp_path)
    db = tmp_path / "evoforge.db"
    with Archive(db) as archive:
        run = archive.create_run(problem, config={}, seed=0)

        def add(seq, source, status, **fields):
            ok = status is Status.OK
            program = Program(
                run_id=run.id, id=program_id(source), seq=seq, source=source,
                parent_id=fields.pop("parent_id", None), island=0, generation=seq,
                status=status, score=1.0 if ok else None, cell=0 if ok else None,
                ast_key=ast_key(source), **fields,
            )  # fmt: skip
            archive.add_program(program)
            return program

        seed = add(0, SEED, Status.OK)
        archive.offer(run.id, 0, seed)
        twin = SEED.replace("return 1", "return  1  # same")
        verdict = NoveltyFilter(archive, run.id, similarity=0.95, rejection=1.0).check(
            twin, 0, np.random.default_rng(0)
        )
        assert verdict is not None and verdict.duplicate_of == seed.id
        duplicate = add(1, twin, Status.DUPLICATE, parent_id=seed.id, artifacts=verdict.artifacts())
        crash = add(2, "def main():\n    return 1 / 0\n", Status.RUNTIME_ERROR, parent_id=seed.id)
        yield db, archive, run, duplicate, crash


def test_stats_count_and_label_novelty_rejections(filled):
    db, archive, run, _, _ = filled
    data = run_stats(archive, archive.run(run.id))
    assert data["novelty_rejected"] == 1
    assert data["statuses"]["duplicate"] == 1
    assert data["status_labels"] == {"duplicate": STATUS_LABELS["duplicate"]}
    label = "copies or equivalents of programs of the run (not evaluated)"
    assert STATUS_LABELS["duplicate"] == label
    result = CliRunner().invoke(cli, ["stats", run.id, "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert (
        "duplicates: 1 candidates were copies or equivalents of programs of the run (not evaluated)"
        in result.output
    )
    data = json.loads(CliRunner().invoke(cli, ["stats", run.id, "--db", str(db), "--json"]).stdout)
    assert data["novelty_rejected"] == 1


def test_stats_without_rejections_say_nothing_of_the_filter(filled):
    db, archive, run, _, _ = filled
    quiet = archive.create_run(_problem(db.parent), config={}, seed=1)
    data = run_stats(archive, archive.run(quiet.id))
    assert data["novelty_rejected"] == 0 and data["status_labels"] == {}
    text = CliRunner().invoke(cli, ["stats", quiet.id, "--db", str(db)]).output
    assert "novelty filter" not in text


def test_a_rejected_candidate_is_never_picked_for_repair(filled):
    _, archive, run, duplicate, crash = filled
    failures = repairable_failures(archive, run.id, 0, window=100)
    assert [f.id for f in failures] == [crash.id]
    config = ModeConfig(repair_rate=1.0)
    picks = {
        pick_repair(archive, run.id, 0, np.random.default_rng(i), config).id for i in range(20)
    }
    assert picks == {crash.id}
    assert pick_repair(archive, run.id, 0, np.random.default_rng(0), config, busy={crash.id}) is (
        None
    )
    assert duplicate.status is Status.DUPLICATE


def test_the_dashboard_run_page_carries_the_count_and_label(filled):
    _, archive, run, _, _ = filled
    pytest.importorskip("starlette")
    from evoforge.evolve.dashboard._pages import run_page

    data = run_page(archive, run.id)
    assert data["novelty_rejected"] == 1
    assert data["status_labels"]["duplicate"] == STATUS_LABELS["duplicate"]
