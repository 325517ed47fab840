"""The live display of a suite: a table per task on a terminal, one plain line in a log."""

from __future__ import annotations

import io

from rich.console import Console

from evoforge.archive import RunStatus, SuiteInfo
from evoforge.evolve.run import Arm, LiveSuiteProgress, Snapshot
from evoforge.problems import Direction, Objective

SUITE = SuiteInfo(
    "suite-x", "pie_suite", 100, "bandit", {}, RunStatus.RUNNING, None, 0.0, 0.0
)  # fmt: skip
INSTRUCTIONS = Objective("instructions", Direction.MINIMIZE)


def _arms() -> list[Arm]:
    fast = Arm(0, "pie_sieve", cap=30, spent=20, seed_score=-1000.0, busy=True)
    slow = Arm(1, "pie_lis", cap=8, spent=8, seed_score=-500.0)
    return [fast, slow, Arm(2, "pie_knapsack")]


def test_a_log_gets_one_line_with_each_tasks_share_and_ratio():
    out = io.StringIO()
    clock = iter([0.0, 100.0, 200.0, 300.0]).__next__
    display = LiveSuiteProgress(Console(file=out, width=300), every_s=30.0, clock=clock)
    with display:
        arms = _arms()
        display.allocation(SUITE, arms, "pie_sieve: +10 (bandit)")
        display.task(arms[0], Snapshot("r", 30, INSTRUCTIONS, evaluations=25, best_score=-250.0))
    text = out.getvalue()
    assert "suite-x: evaluations 33/100" in text
    assert (
        "pie_sieve 25/30 4x" in text and "pie_lis 8/8 1x" in text and "pie_knapsack 0/0 —" in text
    )


def test_a_terminal_gets_a_table_of_states():
    display = LiveSuiteProgress(Console(file=io.StringIO(), width=200, force_terminal=True))
    arms = _arms()
    display.allocation(SUITE, arms, "note")
    display.task(arms[0], Snapshot("r", 30, INSTRUCTIONS, evaluations=25, best_score=-250.0))
    out = io.StringIO()
    Console(file=out, width=200).print(display.table())
    text = out.getvalue()
    assert "evaluations 33/100 (granted 38)" in text
    rows = {
        cells[0]: cells[1:]
        for line in text.splitlines()
        if (cells := [c.strip() for c in line.strip("│ ").split("│")])[0].startswith("pie_")
    }
    assert rows["pie_sieve"] == ["running", "25/30", "250", "4x"]  # its own direction
    assert rows["pie_lis"][:2] == ["waiting", "8/8"] and rows["pie_knapsack"][0] == "queued"


def test_status_shows_a_suite_its_tasks_and_its_last_decisions(tmp_path):
    import json

    from click.testing import CliRunner

    from evoforge.evolve.cli import cli
    from tests.evolve.suite_history import build_suite_archive

    db = tmp_path / "s.db"
    suite_id = build_suite_archive(db)
    runner = CliRunner()
    listed = runner.invoke(cli, ["status", "--db", str(db)]).output
    assert f"{suite_id}  [finished]  suite pie_pair  allocation bandit" in listed
    assert "task 1 of suite " + suite_id in listed  # each task's run names its suite
    shown = runner.invoke(cli, ["status", suite_id[:18], "--db", str(db)]).output
    assert "evaluations 20/30 (granted 20) across 2 tasks  vs seeds 1.414x" in shown
    assert "pie_a  finished     15/15      2 grants" in shown and "vs seed 2x" in shown
    assert "#2 pie_a +10 -> 15 at 5 spent (x1.994 vs seed): bandit: index 0.1" in shown
    data = json.loads(runner.invoke(cli, ["status", suite_id, "--db", str(db), "--json"]).output)
    assert [t["granted"] for t in data["tasks"]] == [15, 5] and len(data["grants"]) == 3
