"""The compiler and layout problems end to end on the prepared corpora (as CI runs them)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from evoforge.evolve.cli import cli
from tests.evaluators.llvm_helpers import needs_bolt, needs_llvm, real_corpus

pytestmark = [pytest.mark.slow, needs_llvm]


def test_llvm_inlining_reports_stock_ratios_on_training_and_held_out(monkeypatch, tmp_path):
    real_corpus(monkeypatch)
    db = tmp_path / "runs.db"
    out = CliRunner().invoke(
        cli, ["run", "llvm_inlining", "--budget", "3", "--no-tune", "--db", str(db), "-q"]
    )
    assert out.exit_code == 0, out.output
    assert "Seed  text_bytes=" in out.output
    assert "Best vs stock -Oz: text_bytes " in out.output
    assert "Held-out (program" in out.output
    assert "Held-out vs stock -Oz: held_out.text_bytes " in out.output


@needs_bolt
def test_code_layout_reports_ratios_to_the_original_order_and_bolt(monkeypatch, tmp_path):
    from evoforge.evaluators.llvm import prepare_profile

    real_corpus(monkeypatch, ["lz4"])
    prepare_profile()
    db = tmp_path / "runs.db"
    out = CliRunner().invoke(
        cli, ["run", "code_layout", "--budget", "6", "--no-tune", "--db", str(db), "-q"]
    )
    assert out.exit_code == 0, out.output
    assert "Best vs original order: ext_tsp " in out.output
    assert "Best vs BOLT ext-tsp: ext_tsp " in out.output
    ratio = float(out.output.split("Best vs original order: ext_tsp ")[1].split("×")[0])
    assert ratio > 1.0  # the seed's chaining already beats the compiler's order
    assert "stage applied" in out.output  # the best layout, rebuilt for real
    assert "Held-out vs original order: applied.i1_misses " in out.output
