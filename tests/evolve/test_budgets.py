"""Spending budgets: USD and tokens stop a run cleanly, and resume can raise them."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from evoforge.archive import Archive, model_usage
from evoforge.evolve import ConfigError, RunConfig, resume_run, start_run
from evoforge.evolve.cli import cli
from evoforge.plugins import pm
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC
from tests.evolve import scripted_models
from tests.evolve.scripted_models import rewrite

# The scripted model answers through litellm's mock: 10 prompt + 20 completion tokens a call,
# priced as gpt-4o-mini by litellm's local price map.
TOKENS_PER_CALL = 30


@pytest.fixture
def tiny(make_problem, tmp_path):
    pm.register(scripted_models, "scripted-models")
    scripted_models._cursors.clear()
    scripted_models.SCRIPTS["distinct"] = [
        rewrite(f"def main():\n    return [{i}.0, 2.0]\n") for i in range(200)
    ]
    yield str(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)), tmp_path / "a.db"
    pm.unregister(name="scripted-models")
    scripted_models.SCRIPTS.clear()


def _config(problem, **kw):
    return RunConfig(problem=problem, budget=100, workers=1, model="scripted/distinct", **kw)


def test_token_budget_stops_the_run_cleanly(tiny):
    problem, db = tiny
    run, report = asyncio.run(start_run(_config(problem, token_budget=10 * TOKENS_PER_CALL), db))
    assert report.status == "finished"
    assert report.reason == "token budget of 300 reached (300 used)"
    with Archive(db) as archive:
        info = archive.run(run.id)
        calls = archive.llm_calls(run.id)
    assert len(calls) == 10
    assert info.tokens_in + info.tokens_out == 300
    assert info.evaluations == 11  # the seed and one child per call


def test_usd_budget_stops_the_run_and_resume_raises_it(tiny):
    problem, db = tiny
    run, report = asyncio.run(start_run(_config(problem, usd_budget=1e-4), db))
    assert report.status == "finished"
    assert report.reason.startswith("USD budget of $0.0001 reached")
    with Archive(db) as archive:
        calls = archive.llm_calls(run.id)
        spent = archive.run(run.id).cost_usd
    per_call = calls[0].cost_usd
    assert per_call and per_call > 0
    assert spent == pytest.approx(sum(c.cost_usd for c in calls))
    assert spent >= 1e-4 and spent - per_call < 1e-4  # stopped at the first call past it

    with pytest.raises(ConfigError, match="already spent its USD budget.*--usd-budget"):
        asyncio.run(resume_run(run.id, db))
    _, again = asyncio.run(resume_run(run.id, db, usd_budget=2e-4))
    assert again.reason.startswith("USD budget of $0.0002 reached")


def test_budgets_must_be_positive():
    with pytest.raises(ConfigError, match="usd_budget = 0"):
        RunConfig(problem="p", usd_budget=0)
    with pytest.raises(ConfigError, match="token_budget = -5"):
        RunConfig(problem="p", token_budget=-5)


def test_status_reports_each_models_calls_tokens_and_cost(tiny):
    problem, db = tiny
    run, _ = asyncio.run(start_run(_config(problem, token_budget=10 * TOKENS_PER_CALL), db))
    with Archive(db) as archive:
        (usage,) = model_usage(archive, run.id, improvements=True)
        calls = archive.llm_calls(run.id)
    assert usage.model == "scripted/distinct"
    assert (usage.calls, usage.retries, usage.errors, usage.unpriced) == (10, 0, 0, 0)
    assert usage.tokens_in + usage.tokens_out == 300
    assert usage.cost_usd == pytest.approx(sum(c.cost_usd for c in calls))
    assert 0 <= usage.improvements <= 10

    shown = CliRunner().invoke(cli, ["status", run.id, "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert f"model scripted/distinct: 10 calls, {usage.improvements} improved" in shown.output
    as_json = CliRunner().invoke(cli, ["status", run.id, "--db", str(db), "--json"])
    assert json.loads(as_json.output)["models"][0]["calls"] == 10
