"""What people read: objectives in their own direction everywhere (a minimised one is never
negated), a progress block that never wraps in a log, a seed error that keeps its cause, and a
failed-seed run that says why it cannot be resumed."""

from __future__ import annotations

import asyncio
import io
import json
import re

import pytest
from click.testing import CliRunner
from rich.console import Console

from evoforge.archive import Archive
from evoforge.evolve import ConfigError, RunConfig, SeedError, Snapshot, resume_run, start_run
from evoforge.evolve.cli import cli
from evoforge.evolve.run._controller import shorten
from evoforge.evolve.run._progress import LiveProgress, render
from evoforge.problems import Direction, Objective

MINIMIZE_SPEC = """
    name = "sorting"
    objectives = {"mean_comparisons": "minimize"}
    descriptors = {"a": (0.0, 10.0, 5)}
    preload = []
    timeout_s = 5
    memory_mb = 512

    def evaluate(output):
        a, b = output
        return {"mean_comparisons": 1877.375 + (a - 3.0) ** 2 + (b - 7.0) ** 2, "a": a}
"""
SEED = """
    # EVOLVE-BLOCK-START
    def main():
        a = 1.5
        b = 2.25
        return [a, b]
    # EVOLVE-BLOCK-END
"""


def test_live_line_shows_a_minimised_objective_as_it_is():
    snapshot = Snapshot(
        run_id="r",
        budget=10,
        objective=Objective("mean_comparisons", Direction.MINIMIZE),
        best_score=-1877.375,
        island_best={0: -1877.375, 1: -0.0, 2: None},
    )
    console = Console(file=io.StringIO(), width=200)
    console.print(render(snapshot))
    text = console.file.getvalue()
    assert "best mean_comparisons 1877.38 (min)" in text
    assert "island bests 0:1877.38 1:0 2:—" in text
    assert "-1877" not in text and "-0" not in text


def test_progress_block_is_not_wrapped_when_stderr_is_a_file(monkeypatch):
    long_id = "circle_packing-" + "x" * 120
    snapshot = Snapshot(run_id=long_id, budget=10, evaluations=3, best_score=2.5)
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    with LiveProgress() as progress:
        progress.update(snapshot)
    lines = stream.getvalue().splitlines()
    assert any(long_id in line and "best 2.5" in line for line in lines)
    assert all(len(line) < 400 for line in lines)  # no padding to a huge width either


@pytest.fixture
def sorting(make_problem):
    return make_problem(MINIMIZE_SPEC, SEED, name="sorting")


@pytest.mark.slow
def test_status_top_and_stats_show_a_minimised_objective_as_it_is(sorting, tmp_path):
    db = tmp_path / "m.db"
    run = CliRunner().invoke(cli, ["run", str(sorting), "--budget", "12", "--db", str(db), "-q"])
    assert run.exit_code == 0, run.output
    with Archive(db) as archive:
        info = archive.latest_run()
        best = archive.get_program(info.id, info.best_program_id).objectives["mean_comparisons"]
    assert info.best_score == -best  # stored oriented, so bigger is better
    status = CliRunner().invoke(cli, ["status", "--db", str(db)]).stdout
    # (the QD score, a sum of oriented scores, is negative: with one cell filled, it is -best)
    shown = re.sub(r"QD score \S+", "", status)
    assert f"best mean_comparisons {best:.10g} (min)" in shown and f"-{best:.10g}" not in shown
    top = CliRunner().invoke(cli, ["top", "--db", str(db), "-n", "1"]).stdout
    assert "mean_comparisons (min)" in top and f"{best:.10g}" in top and f"-{best:.10g}" not in top
    stats = json.loads(CliRunner().invoke(cli, ["stats", "--db", str(db), "--json"]).stdout)
    assert (stats["best"], stats["direction"]) == (best, "minimize")
    assert all(i["best"] is None or i["best"] > 0 for i in stats["islands"])


def test_shorten_keeps_both_ends():
    text = "the program defines no function `main()`; calls main(" + "1, " * 2000 + "2)"
    short = shorten(text, 600)
    assert short.startswith("the program defines no function `main()`")
    assert short.endswith("2)") and len(short) < 700 and "characters cut" in short
    assert shorten("short") == "short"


LONG_ARGS_SPEC = """
    name = "long_args"
    objectives = {"score": "maximize"}
    preload = []
    timeout_s = 5
    memory_mb = 512
    stages = [{"name": "full", "timeout_s": 5, "kwargs": {"data": list(range(2000))}}]

    def evaluate(output):
        return {"score": float(output)}
"""


@pytest.mark.slow
def test_failed_seed_keeps_its_cause_and_its_run_cannot_be_resumed(make_problem, tmp_path):
    folder = make_problem(LONG_ARGS_SPEC, "# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n")
    db = tmp_path / "seed.db"
    with pytest.raises(SeedError, match="defines no function `main"):
        asyncio.run(start_run(RunConfig(problem=str(folder), budget=5, workers=1), db))
    with Archive(db) as archive:
        stored = archive.latest_run()
    assert stored.status == "failed" and "defines no function `main" in stored.stop_reason
    with pytest.raises(ConfigError, match="cannot be resumed: its seed program evaluated to"):
        asyncio.run(resume_run(None, db))  # the latest run, as `evoforge resume` picks it
    with Archive(db) as archive:
        assert archive.run(stored.id).stop_reason == stored.stop_reason  # not overwritten
    result = CliRunner().invoke(cli, ["resume", "--db", str(db), "-q"])
    assert result.exit_code == 1 and "cannot be resumed" in result.output
    assert "Traceback" not in result.output
