"""Mining commands after a real run: ``evoforge run circle_packing --budget 300`` (offline), then
stats, failures, lineage, pareto, compare, export, top and status, each checked against SQL
written here, independently of the archive's queries."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import runpy
import sqlite3

import pytest
from click.testing import CliRunner

from evoforge.archive import Status
from evoforge.evolve.cli import cli
from evoforge.evolve.mining import failure_message

pytestmark = pytest.mark.slow


def invoke(*args: str, ok: bool = True):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    if ok:
        assert result.exit_code == 0, result.output
    return result


def as_json(*args: str):
    return json.loads(invoke(*args, "--json").stdout)


@pytest.fixture(scope="module")
def archive_db(tmp_path_factory):
    """A 300-evaluation circle_packing run and a 40-evaluation one, in one archive.

    The tests read each program's evaluations from the tuner's metrics, not from the engine's
    own count; an edit's blocks tried alone leave no metric, so that is off here."""
    folder = tmp_path_factory.mktemp("mining")
    db, config = folder / "runs.db", folder / "whole-edits.toml"
    config.write_text("[search]\nsplit_edits = 0\n")
    for budget, seed in ((300, 1), (40, 2)):
        invoke(
            "run", "circle_packing", "--budget", budget, "--seed", seed, "--db", db, "-q",
            "--config", config,
        )  # fmt: skip
    conn = sqlite3.connect(db)
    first, second = (r[0] for r in conn.execute("SELECT id FROM runs ORDER BY created_at"))
    conn.close()
    return db, first, second


@pytest.fixture
def sql(archive_db):
    conn = sqlite3.connect(archive_db[0])
    yield lambda query, *params: conn.execute(query, params).fetchall()
    conn.close()


NOT_EVALUATED = tuple(str(s) for s in Status if not s.evaluated)  # edit/syntax errors, duplicates
# Evaluations a program used of the budget: 1, plus its knob-tuning trials (circle_packing
# tunes), read from the metrics the tuner wrote rather than the engine's own column.
USED = "1 + coalesce(json_extract(metrics_json, '$.tuning_trials'), 0)"


def radii(objectives_json):
    return json.loads(objectives_json)["sum_radii"]


def test_stats_match_the_archive(archive_db, sql):
    db, run, _ = archive_db
    data = as_json("stats", run, "--db", db)
    statuses = dict(sql("SELECT status, count(*) FROM programs WHERE run_id = ? GROUP BY 1", run))
    evaluated = sum(n for s, n in statuses.items() if s not in NOT_EVALUATED)
    # circle_packing tunes knobs: each trial is an evaluation of the budget too
    ((trials,),) = sql(
        "SELECT coalesce(sum(json_extract(metrics_json, '$.tuning_trials')), 0) FROM programs "
        "WHERE run_id = ?",
        run,
    )
    assert data["statuses"] == statuses and data["evaluations"] == evaluated + trials == 300
    ((best,),) = sql(
        "SELECT max(json_extract(objectives_json, '$.sum_radii')) FROM programs "
        "WHERE run_id = ? AND status = 'ok'",
        run,
    )
    assert data["objective"] == "sum_radii" and data["direction"] == "maximize"
    assert data["best"] == best
    ((elites, qd),) = sql(
        "SELECT count(*), sum(score) FROM elites WHERE run_id = ? AND island = -1", run
    )
    assert data["grid"]["elites"] == elites and data["grid"]["cells"] == 100
    assert data["grid"]["coverage"] == elites / 100
    assert math.isclose(data["grid"]["qd_score"], qd, rel_tol=1e-12)
    ((tokens_in, tokens_out),) = sql(
        "SELECT sum(prompt_tokens), sum(completion_tokens) FROM llm_calls WHERE run_id = ?", run
    )
    assert (data["tokens_in"], data["tokens_out"]) == (tokens_in, tokens_out)
    assert [m["calls"] for m in data["models"]] == [
        n for (n,) in sql("SELECT count(*) FROM llm_calls WHERE run_id = ? AND status = 'ok'", run)
    ]
    # best over evaluations, recomputed here from the rows in seq order
    expected, count, top = [], 0, None
    for status, score, objectives_json, used in sql(
        f"SELECT status, score, objectives_json, {USED} FROM programs WHERE run_id = ? "
        "ORDER BY seq",
        run,
    ):
        count += used if status not in NOT_EVALUATED else 0
        if score is not None and (top is None or score > top):
            top = score
            expected.append((count, radii(objectives_json)))
    assert [(s["evaluation"], s["value"]) for s in data["best_over_evaluations"]] == expected
    text = invoke("stats", run[:-2], "--db", db).stdout  # a unique prefix names the run
    assert f"best sum_radii {best:.10g} (max)" in text


def test_failures_are_grouped_by_status_and_message(archive_db, sql):
    db, run, _ = archive_db
    data = as_json("failures", run, "--db", db, "-n", "1000")
    failed = dict(
        sql(
            "SELECT status, count(*) FROM programs WHERE run_id = ? AND status != 'ok' GROUP BY 1",
            run,
        )
    )
    counted: dict[str, int] = {}
    for group in data["groups"]:
        counted[group["status"]] = counted.get(group["status"], 0) + group["count"]
        ((status, error),) = sql(
            "SELECT status, json_extract(artifacts_json, '$.error') FROM programs "
            "WHERE run_id = ? AND id = ?",
            run,
            group["example_id"],
        )
        # the example is the message in one line (runs of white space as one space)
        assert status == group["status"] and failure_message({"error": error}) == group["example"]
    assert counted == failed and data["failed"] == sum(failed.values())
    assert [g["count"] for g in data["groups"]] == sorted(
        (g["count"] for g in data["groups"]), reverse=True
    )


def test_lineage_walks_back_to_the_seed(archive_db, sql):
    db, run, _ = archive_db
    ((best,),) = sql("SELECT best_program_id FROM runs WHERE id = ?", run)
    chain = sql(
        "WITH RECURSIVE up(id, parent_id, seq, objectives_json, edit_kind, model) AS ("
        " SELECT id, parent_id, seq, objectives_json, edit_kind, model FROM programs"
        " WHERE run_id = ?1 AND id = ?2"
        " UNION ALL SELECT p.id, p.parent_id, p.seq, p.objectives_json, p.edit_kind, p.model"
        " FROM programs p JOIN up ON p.run_id = ?1 AND p.id = up.parent_id)"
        " SELECT id, seq, objectives_json, edit_kind, model FROM up ORDER BY seq",
        run,
        best,
    )
    data = as_json("lineage", best, "--db", db)
    assert [(s["id"], s["seq"], s["edit_kind"], s["model"]) for s in data["steps"]] == [
        (c[0], c[1], c[3], c[4]) for c in chain
    ]
    assert [s["value"] for s in data["steps"]] == [radii(c[2]) for c in chain]
    assert data["steps"][0]["edit_kind"] == "seed" and data["steps"][-1]["id"] == best
    assert all(s["diff"].startswith("---") for s in data["steps"])
    text = invoke("lineage", best[:8], "--db", db).stdout
    assert f"lineage of {best}" in text and "offline/mutator" in text


def test_pareto_of_one_objective_is_the_best_programs(archive_db, sql):
    db, run, _ = archive_db
    data = as_json("pareto", run, "--db", db)
    rows = sql("SELECT id, objectives_json FROM programs WHERE run_id = ? AND status = 'ok'", run)
    top = max(radii(o) for _, o in rows)
    assert {p["id"] for p in data["front"]} == {i for i, o in rows if radii(o) == top}
    bad = invoke("pareto", run, "--objectives", "nope", "--db", db, ok=False)
    assert bad.exit_code == 1 and "no objective 'nope'" in bad.output


def test_compare_two_runs(archive_db, sql):
    db, first, second = archive_db
    data = as_json("compare", first, second, "--db", db)
    assert data["comparable"] and data["objective"] == "sum_radii"
    assert data["checkpoints"] == [1, 10, 25, 50, 100, 250]
    for row in data["runs"]:
        rows = sql(
            f"SELECT status, objectives_json, score, {USED} FROM programs WHERE run_id = ? "
            "ORDER BY seq",
            row["id"],
        )
        for mark in data["checkpoints"]:
            count, best = 0, None
            for status, objectives_json, score, used in rows:
                count += used if status not in NOT_EVALUATED else 0
                if count > mark:
                    break
                if score is not None:
                    best = max(best or -math.inf, radii(objectives_json))
            assert row["best_at"][str(mark)] == (best if mark <= row["evaluations"] else None)
        statuses = dict(
            sql("SELECT status, count(*) FROM programs WHERE run_id = ? GROUP BY 1", row["id"])
        )
        assert row["statuses"] == statuses
    text = invoke("compare", first, second, "--db", db).stdout
    assert "after 250 evaluations" in text
    same = invoke("compare", first, first, "--db", db, ok=False)
    assert "the same run is named twice" in same.output


def test_export_best_reproduces_its_stored_score(archive_db, sql, tmp_path):
    db, run, _ = archive_db
    out = tmp_path / "out"
    data = as_json("export", run, "--best", "1", out, "--db", db)
    (row,) = data["programs"]
    ((best_id, objectives_json, source),) = sql(
        "SELECT id, objectives_json, source FROM programs WHERE run_id = ? AND status = 'ok' "
        "ORDER BY score DESC, seq LIMIT 1",
        run,
    )
    exported = out / f"01-{best_id}.py"
    assert row["source"] == str(exported) and exported.read_text() == source
    assert hashlib.sha256(exported.read_bytes()).hexdigest()[:16] == best_id
    metadata = json.loads((out / f"01-{best_id}.json").read_text())
    assert metadata["objectives"] == json.loads(objectives_json)
    assert metadata["directions"] == {"sum_radii": "maximize"}
    # Run the exported file and score its output with the problem's own evaluate().
    ((problem_path,),) = sql("SELECT problem_path FROM runs WHERE id = ?", run)
    spec = importlib.util.spec_from_file_location("circle_packing_spec", problem_path)
    problem = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(problem)
    output = runpy.run_path(str(exported))["main"]()
    assert problem.evaluate(output)["sum_radii"] == radii(objectives_json)
    # --verify does the same through the sandboxed evaluator
    verified = as_json("export", run, "--best", "1", out, "--db", db, "--force", "--verify")
    assert verified["programs"][0]["verified"]["reproduced"] is True
    again = invoke("export", run, "--best", "1", out, "--db", db, ok=False)
    assert again.exit_code == 1 and "not overwriting" in again.output and "--force" in again.output
    neither = invoke("export", run, out, "--db", db, ok=False)
    assert "choose what to export: --best K or --pareto" in neither.output


def test_export_pareto_front(archive_db, sql, tmp_path):
    db, run, _ = archive_db
    data = as_json("export", run, "--pareto", tmp_path / "front", "--db", db)
    front = as_json("pareto", run, "--db", db)["front"]
    assert [p["program_id"] for p in data["programs"]] == [p["id"] for p in front]
    for p in data["programs"]:
        assert (tmp_path / "front" / f"{p['rank']:02d}-{p['program_id']}.json").exists()


def test_top_and_status_show_the_objective_in_its_direction(archive_db, sql):
    db, run, _ = archive_db
    ((best,),) = sql("SELECT best_score FROM runs WHERE id = ?", run)
    top = invoke("top", run, "-n", "1", "--db", db).stdout
    assert "sum_radii (max)" in top and f"{best:.10g}" in top
    status = as_json("status", run, "--db", db)
    assert status["best"] == best and status["objective"] == "sum_radii"
