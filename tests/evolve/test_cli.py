"""The CLI in-process: run, status, top, show, plugins, problems, and its error lines."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from evoforge.archive import Archive
from evoforge.evolve.cli import cli
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One small offline run shared by the read-only command tests."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "tiny").mkdir()
    (folder / "tiny" / "problem.py").write_text(TRIVIAL_SPEC.replace("\n    ", "\n"))
    (folder / "tiny" / "seed.py").write_text(TRIVIAL_SEED.replace("\n    ", "\n"))
    db = folder / "cli.db"
    result = CliRunner().invoke(
        cli,
        ["run", str(folder / "tiny"), "--budget", "15", "--workers", "1", "--db", str(db), "-q"],
    )
    assert result.exit_code == 0, result.output
    return db, result.output


def test_run_prints_where_the_archive_is_and_how_to_look(finished):
    db, output = finished
    assert "finished: budget of 15 evaluations reached" in output
    assert f"Archive: {db}" in output
    assert "evoforge top" in output and "evoforge show" in output


def test_status_json(finished):
    db, _ = finished
    result = CliRunner().invoke(cli, ["status", "--db", str(db), "--json"])
    rows = json.loads(result.output)
    assert rows[0]["evaluations"] == 15 and rows[0]["status"] == "finished"
    assert rows[0]["statuses"]["ok"] >= 1


def test_status_and_stats_show_calls_per_evaluation_and_the_wasted_calls(finished):
    """One figure, counted from the rows here, in ``status`` and ``stats`` (text and JSON)."""
    import sqlite3

    db, _ = finished
    conn = sqlite3.connect(db)
    ((calls, failed),) = conn.execute("SELECT count(*), sum(status != 'ok') FROM llm_calls")
    wasted = dict(
        conn.execute(
            "SELECT status, count(*) FROM programs WHERE status IN "
            "('duplicate', 'edit_error', 'syntax_error') GROUP BY status"
        ).fetchall()
    )
    conn.close()
    expected = {
        "calls": calls,
        "evaluations": 15,
        "calls_per_evaluation": calls / 15,
        "wasted_calls": sum(wasted.values()) + failed,
        "wasted": {
            "duplicate": wasted.get("duplicate", 0),
            "edit_error": wasted.get("edit_error", 0),
            "syntax_error": wasted.get("syntax_error", 0),
            "model_error": failed,
        },
    }
    status = json.loads(CliRunner().invoke(cli, ["status", "--db", str(db), "--json"]).output)
    stats = json.loads(CliRunner().invoke(cli, ["stats", "--db", str(db), "--json"]).output)
    assert status[0]["cost"] == stats["cost"] == expected
    line = f"calls {calls} ({calls / 15:.2f} per evaluation), wasted {expected['wasted_calls']}"
    for command in ("status", "stats"):
        text = CliRunner().invoke(cli, [command, "--db", str(db)]).output
        assert line in text, text


def test_top_and_show(finished):
    db, _ = finished
    result = CliRunner().invoke(cli, ["top", "--db", str(db), "-n", "3", "--json"])
    best = json.loads(result.output)
    assert 1 <= len(best) <= 3
    assert [p["score"] for p in best] == sorted((p["score"] for p in best), reverse=True)
    shown = CliRunner().invoke(cli, ["show", best[0]["id"][:8], "--db", str(db)])
    assert shown.exit_code == 0 and "EVOLVE-BLOCK-START" in shown.output
    diff = CliRunner().invoke(cli, ["show", best[0]["id"], "--db", str(db), "--diff"])
    assert diff.exit_code == 0


def test_top_pareto_with_one_objective_is_the_best_program(finished):
    db, _ = finished
    front = json.loads(
        CliRunner().invoke(cli, ["top", "--pareto", "--db", str(db), "--json"]).output
    )
    best = json.loads(CliRunner().invoke(cli, ["top", "-n", "1", "--db", str(db), "--json"]).output)
    # One objective: the front is the best score (several programs when they tie).
    assert best[0]["id"] in [p["id"] for p in front]
    assert {p["score"] for p in front} == {best[0]["score"]}


def test_show_unknown_program_is_one_clear_line(finished):
    db, _ = finished
    result = CliRunner().invoke(cli, ["show", "ffffffffffff", "--db", str(db)])
    assert result.exit_code == 1 and "Error:" in result.output
    assert "Traceback" not in result.output


def test_missing_archive_says_how_to_create_one(tmp_path):
    result = CliRunner().invoke(cli, ["status", "--db", str(tmp_path / "none.db")])
    assert result.exit_code == 1 and "evoforge run" in result.output


def test_plugins_lists_evaluators_with_availability():
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    data = json.loads(result.output)
    python = next(e for e in data["evaluators"] if e["name"] == "python")
    assert python["available"] is True
    assert "tournament" in data["selection_strategies"]
    assert "offline" in data["model_providers"]


def test_plugins_says_which_isolation_candidates_get_here():
    from evoforge.evaluators.sandbox import ISOLATION_KEYS

    data = json.loads(CliRunner().invoke(cli, ["plugins", "--json"]).output)
    isolation = data["isolation"]
    assert list(isolation) == list(ISOLATION_KEYS)
    for key, state in isolation.items():  # on, or off with why
        assert state.startswith(("on: ", "off: ")) and len(state) > 6, (key, state)
    text = CliRunner().invoke(cli, ["plugins"]).output
    assert "candidate isolation on this host" in text
    for key in ("user", "pid namespace", "ipc namespace", "memory"):
        assert f"  {key}: " in text


def test_problems_lists_the_builtins():
    result = CliRunner().invoke(cli, ["problems"])
    assert "circle_packing" in result.output and "trivial" in result.output


def test_malformed_problem_is_one_clear_line(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "problem.py").write_text("name = 'x'\n")
    result = CliRunner().invoke(
        cli, ["run", str(tmp_path / "p"), "-q", "--db", str(tmp_path / "x.db")]
    )
    assert result.exit_code == 1
    assert "problem.py: objectives: missing" in result.output
    assert result.output.count("\n") == 1


def test_unknown_selection_strategy_is_one_clear_line_and_stores_no_run(tmp_path):
    db = tmp_path / "s.db"
    args = ["run", "trivial", "--selection", "nope", "-q", "--db", str(db)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert "no selection strategy 'nope'; choose one of" in result.output
    assert "Traceback" not in result.output
    assert not db.exists()  # validated before the archive is touched


def test_model_settings_from_flags_are_stored_with_the_run(tmp_path):
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "problem.py").write_text(TRIVIAL_SPEC.replace("\n    ", "\n"))
    (tmp_path / "tiny" / "seed.py").write_text(TRIVIAL_SEED.replace("\n    ", "\n"))
    db = tmp_path / "flags.db"
    args = ["run", str(tmp_path / "tiny"), "--budget", "2", "--workers", "1", "--db", str(db)]
    flags = ["--temperature", "0.2", "--max-tokens", "123", "--outage", "42", "--ensemble", "ucb1"]
    models = ["--model", "offline/a", "--model", "offline/b"]
    result = CliRunner().invoke(cli, [*args, *flags, *models])
    assert result.exit_code == 0, result.output
    with Archive(db) as archive:
        config = archive.latest_run().config
    assert (config["temperature"], config["max_tokens"]) == (0.2, 123)
    assert (config["outage_s"], config["ensemble"]) == (42.0, "ucb1")
    assert [m["model"] for m in config["models"]] == ["offline/a", "offline/b"]
