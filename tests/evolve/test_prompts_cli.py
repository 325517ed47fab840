"""``evoforge prompts``: a run's prompt variants from a real archive file, as text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evoforge.evolve.cli import cli
from tests.evolve.prompt_history import build_prompt_archive


def invoke(*args: str | Path) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_prompt_archive(tmp_path / "p.db")


def test_prompts_lists_each_variant_with_its_children(db: Path):
    data = json.loads(invoke("prompts", "evolving", "--db", db, "--json"))
    default, bank = data["variants"]
    assert data["objective"] == "score" and data["message"] == ""
    assert (default["origin"], default["parent_id"], default["change"]) == ("default", None, "")
    assert [default[k] for k in ("children", "evaluated", "improved", "best")] == [3, 2, 1, 2.0]
    assert default["improvement_rate"] == pytest.approx(0.5)
    assert bank["parent_id"] == default["id"] and bank["origin"] == "bank"
    assert [bank[k] for k in ("children", "evaluated", "improved", "best")] == [2, 2, 2, 4.0]
    assert bank["change"].startswith("task_diff: Focus: ")
    assert set(bank["templates"]) == {"system", "task_diff", "task_rewrite", "task_crossover",
                                      "task_repair"}  # fmt: skip

    text = invoke("prompts", "evolving", "--db", db)
    lines = text.splitlines()
    assert lines[0] == "prompt variants of evolving (2)"
    row = next(line for line in lines if line.startswith(bank["id"]))
    assert row.split() == [bank["id"], "bank", "3", "2", "2", "2", "100%", "4", default["id"]]
    row = next(line for line in lines if line.startswith(default["id"]))
    assert row.split() == [default["id"], "default", "0", "3", "2", "1", "50%", "2", "—"]
    assert f"    changed {bank['change']}" in lines


def test_a_run_without_variants_says_how_to_turn_them_on(db: Path):
    text = invoke("prompts", "plain", "--db", db)
    assert text.strip() == (
        "plain: prompt evolution was off for this run: set [search] prompt_evolution = true "
        "(prompt variants are recorded from then on)"
    )
    assert json.loads(invoke("prompts", "plain", "--db", db, "--json"))["variants"] == []
