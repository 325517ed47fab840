"""Models that cannot be reached (no key, refused key, unknown model): the run ends at once
with the reason and the fix (``--model offline/mutator``), and ``evoforge failures`` says so."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from evoforge.archive import LlmCall
from evoforge.evolve.cli import cli
from evoforge.evolve.mining import model_failures
from evoforge.evolve.models import ModelOutage, ModelPool
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC

MISSING = "EVOFORGE_TEST_KEY_THAT_IS_NEVER_SET"


def test_a_pool_whose_every_model_fails_for_good_is_unreachable_at_once() -> None:
    pool = ModelPool(["a/x", "b/y"], outage_s=300)
    pool.record_failure("a/x", "auth", "a/x: environment variable K (its api_key_env) is not set")
    assert pool.unreachable() is None  # b/y has not been tried
    pool.check_outage()
    pool.record_failure("b/y", "not_found", "b/y: no such model")
    reason = pool.unreachable()
    assert reason is not None
    assert "missing or refused credentials: a/x: environment variable K" in reason
    assert "model not found: b/y: no such model" in reason
    assert "--model offline/mutator" in reason
    with pytest.raises(ModelOutage, match="no model can be reached"):
        pool.check_outage()  # no outage_s to wait for: it will not heal


@pytest.mark.parametrize("kind", ["rate_limit", "server", "connection", "timeout"])
def test_transient_failures_wait_for_the_outage_time(kind) -> None:
    pool = ModelPool(["a/x"], outage_s=300)
    pool.record_failure("a/x", kind, "try again")
    assert pool.unreachable() is None
    pool.check_outage()


def test_a_model_that_answered_once_is_not_unreachable() -> None:
    pool = ModelPool(["a/x"], outage_s=300)
    pool.record_success("a/x", improved=False)
    pool.record_failure("a/x", "auth", "key revoked")
    assert pool.unreachable() is None


def _call(seq: int, kind: str, error: str, status: str = "error") -> LlmCall:
    return LlmCall(
        id=seq, run_id="r", seq=seq, model="openai/m", latency_s=0.0, status=status,
        error=error, error_kind=kind,
    )  # fmt: skip


def test_failed_calls_are_grouped_with_the_fix() -> None:
    missing = f"openai/m: environment variable {MISSING} (its api_key_env) is not set"
    calls = [
        _call(1, "auth", missing),
        _call(2, "rate_limit", "slow down after 3 s", status="retry"),  # retried: not counted
        _call(2, "rate_limit", "slow down after 4 s"),
        _call(3, "auth", missing),
        _call(4, "rate_limit", "slow down after 12 s"),
    ]
    auth, limited = model_failures(calls)
    assert (auth.kind, auth.count, auth.first_seq) == ("auth", 2, 1)
    assert f"missing credentials: export {MISSING}=<your key>" in auth.hint
    assert "--model offline/mutator" in auth.hint
    assert (limited.count, limited.message, limited.hint) == (2, "slow down after 12 s", "")


def test_a_run_without_its_key_stops_at_once_and_says_why(tmp_path, monkeypatch):
    monkeypatch.delenv(MISSING, raising=False)
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "problem.py").write_text(TRIVIAL_SPEC.replace("\n    ", "\n"))
    (tmp_path / "tiny" / "seed.py").write_text(TRIVIAL_SEED.replace("\n    ", "\n"))
    config = tmp_path / "run.toml"
    config.write_text(f'[[models]]\nmodel = "openai/gpt-4o-mini"\napi_key_env = "{MISSING}"\n')
    db = tmp_path / "nokey.db"
    args = ["run", str(tmp_path / "tiny"), "--config", str(config), "--budget", "50"]
    result = CliRunner().invoke(cli, [*args, "--workers", "1", "--db", str(db), "-q"])
    assert result.exit_code != 0
    out = result.output
    assert out.count(f"environment variable {MISSING} (its api_key_env) is not set") == 1
    assert "--model offline/mutator" in out
    assert "check the model and the prompt" not in out  # not 200 errors later
    report = CliRunner().invoke(cli, ["failures", "--db", str(db)])
    assert report.exit_code == 0, report.output
    assert "model calls failed" in report.output
    assert f"missing credentials: export {MISSING}=<your key>" in report.output
    data = json.loads(CliRunner().invoke(cli, ["failures", "--db", str(db), "--json"]).output)
    assert data["run_status"] == "failed" and "no model can be reached" in data["stop_reason"]
    assert data["model_errors"][0]["kind"] == "auth"
    assert data["model_calls_failed"] <= 10  # stopped after the first round of calls
