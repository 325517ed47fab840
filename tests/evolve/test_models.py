"""Model settings and the ensemble: choice policies, cooldown and probation, outages, replay.

Time is a fake clock the tests move by hand; randomness is a seeded generator.
"""

from __future__ import annotations

import numpy as np
import pytest

from evoforge.evolve.models import REDACTED, ModelOutage, ModelPool, ModelSpec, ModelSpecError


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


# --- ModelSpec -------------------------------------------------------------------------------


def test_spec_from_a_string_and_from_a_table() -> None:
    assert ModelSpec.from_value("openai/gpt-4o-mini") == ModelSpec("openai/gpt-4o-mini")
    spec = ModelSpec.from_value(
        {
            "model": "hosted_vllm/qwen2.5-coder",
            "weight": 2,
            "api_base": "http://gpu-box:8000/v1",
            "temperature": 0.2,
            "max_tokens": 2048,
            "timeout_s": 30,
            "api_key_env": "VLLM_KEY",
        }
    )
    assert (spec.weight, spec.api_base, spec.timeout_s) == (2, "http://gpu-box:8000/v1", 30)
    assert ModelSpec.from_value(spec.to_dict()) == spec
    assert ModelSpec.from_value(spec) is spec


def test_a_key_in_the_settings_is_refused_without_echoing_it() -> None:
    with pytest.raises(ModelSpecError, match="api_key .*is not allowed.*api_key_env") as info:
        ModelSpec.from_value({"model": "openai/gpt-4o", "api_key": "sk-secret-0123456789"})
    assert "sk-secret" not in str(info.value)
    with pytest.raises(ModelSpecError, match="NAME of an environment variable") as info:
        ModelSpec("openai/gpt-4o", api_key_env="sk-secret-0123456789")
    assert "sk-secret" not in str(info.value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("gpt-4o", "model = 'gpt-4o': it names no provider; write a litellm model string"),
        ({"model": "openai/x", "weight": 0}, "weight = 0: must be more than 0"),
        ({"model": "openai/x", "timeout_s": -1}, "timeout_s = -1: must be more than 0"),
        ({"model": "openai/x", "max_tokens": 0.5}, "max_tokens = 0.5: expected a whole number"),
        ({"model": "openai/x", "temperature": -0.1}, "temperature = -0.1: must be at least 0"),
        ({"model": "openai/x", "wieght": 2}, "unknown setting wieght.*known: .*weight"),
        ({"weight": 2}, "model: missing; it is required"),
        (3, "expected a model string .* found int"),
    ],
    ids=["no-provider", "weight", "timeout", "max-tokens", "temperature", "typo", "no-model",
         "not-a-table"],
)  # fmt: skip
def test_bad_specs_name_the_field_and_the_fix(value, message: str) -> None:
    with pytest.raises(ModelSpecError, match=message):
        ModelSpec.from_value(value)


def test_request_params_send_every_provider_setting_the_spec_or_the_run_sets() -> None:
    run = {"temperature": 0.7, "max_tokens": 4096, "api_base": None}
    spec = ModelSpec("ollama/qwen", temperature=0.1, api_base="http://box:11434", timeout_s=5)
    assert spec.request_params(run) == {
        "api_base": "http://box:11434",
        "temperature": 0.1,
        "max_tokens": 4096,
    }  # evoforge's own settings (weight, timeout_s, max_context, api_key_env) are not sent
    assert ModelSpec("openai/x").request_params() == {}


def test_read_api_key_reads_the_named_variable(monkeypatch) -> None:
    spec = ModelSpec("openai/gpt-4o", api_key_env="EVOFORGE_TEST_KEY")
    monkeypatch.delenv("EVOFORGE_TEST_KEY", raising=False)
    with pytest.raises(ModelSpecError, match="EVOFORGE_TEST_KEY .* is not set; export"):
        spec.read_api_key()
    monkeypatch.setenv("EVOFORGE_TEST_KEY", "")
    with pytest.raises(ModelSpecError, match="EVOFORGE_TEST_KEY .* is empty"):
        spec.read_api_key()
    monkeypatch.setenv("EVOFORGE_TEST_KEY", "the-key-123")
    assert spec.read_api_key() == "the-key-123"
    assert ModelSpec("openai/gpt-4o").read_api_key() is None  # litellm's default variable


# --- choosing --------------------------------------------------------------------------------


def test_weighted_choice_follows_the_weights() -> None:
    pool = ModelPool([{"model": "a/big", "weight": 3}, "b/small"])
    rng = np.random.default_rng(0)
    picks = [pool.choose(rng).model for _ in range(4000)]
    assert picks.count("a/big") / len(picks) == pytest.approx(0.75, abs=0.03)


def test_one_model_never_draws_from_the_rng() -> None:
    """So a run with one model draws the same random numbers as before ensembles existed."""
    pool = ModelPool(["offline/mutator"])
    rng = np.random.default_rng(5)
    assert pool.choose(rng).model == "offline/mutator"
    assert rng.random() == np.random.default_rng(5).random()


def test_choices_are_reproducible_from_the_seed(clock: Clock) -> None:
    def run() -> list[str]:
        pool = ModelPool(["a/x", "b/y", "c/z"], policy="ucb1", clock=clock)
        rng, outcomes = np.random.default_rng(11), np.random.default_rng(12)
        picks = []
        for _ in range(60):
            spec = pool.choose(rng)
            picks.append(spec.model)
            pool.record_success(spec, improved=bool(outcomes.random() < 0.3), cost_usd=0.01)
        return picks

    assert run() == run()


def _simulate(pool: ModelPool, truth: dict[str, tuple[float, float]], rounds: int) -> dict:
    """Run ``rounds`` calls; truth: model -> (improvement probability, USD per call)."""
    rng, outcomes = np.random.default_rng(1), np.random.default_rng(2)
    counts = dict.fromkeys(truth, 0)
    for _ in range(rounds):
        spec = pool.choose(rng)
        p, cost = truth[spec.model]
        counts[spec.model] += 1
        pool.record_success(spec, improved=bool(outcomes.random() < p), cost_usd=cost)
    return counts


def test_ucb1_tries_every_model_first() -> None:
    pool = ModelPool(["a/x", "b/y", "c/z"], policy="ucb1")
    rng = np.random.default_rng(3)
    first = []
    for _ in range(3):
        spec = pool.choose(rng)
        first.append(spec.model)
        pool.record_success(spec, improved=False, cost_usd=1.0)
    assert sorted(first) == ["a/x", "b/y", "c/z"]


def test_ucb1_prefers_the_cheaper_improvement() -> None:
    """b improves twice as often but costs ten times as much: a gives more per dollar."""
    truth = {"a/cheap": (0.3, 0.001), "b/dear": (0.6, 0.01)}
    counts = _simulate(ModelPool(list(truth), policy="ucb1"), truth, 600)
    assert counts["a/cheap"] > 4 * counts["b/dear"]


def test_ucb1_with_equal_costs_prefers_the_better_model() -> None:
    truth = {"a/weak": (0.1, 0.002), "b/strong": (0.5, 0.002)}
    counts = _simulate(ModelPool(list(truth), policy="ucb1"), truth, 600)
    assert counts["b/strong"] > 4 * counts["a/weak"]


def test_ucb1_is_scale_free_in_cost() -> None:
    truth = {"a/x": (0.3, 0.001), "b/y": (0.5, 0.003), "c/z": (0.2, 0.0005), "d/free": (0.02, 0)}
    cents = {m: (p, c * 100) for m, (p, c) in truth.items()}
    first = _simulate(ModelPool(list(truth), policy="ucb1"), truth, 300)
    assert first == _simulate(ModelPool(list(truth), policy="ucb1"), cents, 300)


def test_cost_falls_back_to_tokens_then_to_neutral() -> None:
    pool = ModelPool(["a/priced", "b/local", "c/unknown"], policy="ucb1")
    pool.record_success("a/priced", improved=False, cost_usd=0.004)
    pool.record_success("b/local", improved=False, tokens=2000)  # $0.002 at $1 per million
    pool.record_success("c/unknown", improved=False)
    assert pool.relative_costs() == pytest.approx(
        {"a/priced": 1.0, "b/local": 0.5, "c/unknown": 0.75}
    )


def test_free_models_are_floored_not_infinitely_preferred() -> None:
    pool = ModelPool(["offline/mutator", "openai/gpt-4o"], policy="ucb1", min_relative_cost=0.1)
    pool.record_success("offline/mutator", improved=False, cost_usd=0.0)
    pool.record_success("openai/gpt-4o", improved=True, cost_usd=0.02)
    assert pool.relative_costs() == {"offline/mutator": 0.1, "openai/gpt-4o": 1.0}


# --- rotation --------------------------------------------------------------------------------


def test_consecutive_failures_cool_a_model_down_then_probation(clock: Clock) -> None:
    pool = ModelPool(["a/flaky", "b/steady"], cooldown_s=60, failures_to_cooldown=3, clock=clock)
    rng = np.random.default_rng(0)
    pool.record_failure("a/flaky", "server", "503")
    pool.record_failure("a/flaky", "server", "503")
    assert [s.model for s in pool.in_rotation()] == ["a/flaky", "b/steady"]
    pool.record_failure("a/flaky", "server", "503")
    assert [s.model for s in pool.in_rotation()] == ["b/steady"]
    assert {pool.choose(rng).model for _ in range(50)} == {"b/steady"}
    clock.advance(59.9)
    assert [s.model for s in pool.in_rotation()] == ["b/steady"]
    clock.advance(0.1)  # back, on probation: one failure sends it away for twice as long
    assert [s.model for s in pool.in_rotation()] == ["a/flaky", "b/steady"]
    pool.record_failure("a/flaky", "timeout", "slow")
    assert pool.stats("a/flaky").cooldown_until == clock.now + 120
    clock.advance(120)
    pool.record_success("a/flaky", improved=False, cost_usd=0.001)  # healed: all forgiven
    stats = pool.stats("a/flaky")
    assert (stats.cooldowns, stats.probation, stats.failures) == (0, False, 0)
    for _ in range(2):
        pool.record_failure("a/flaky", "server", "503")
    assert [s.model for s in pool.in_rotation()] == ["a/flaky", "b/steady"]  # needs 3 again


def test_cooldowns_double_up_to_a_cap(clock: Clock) -> None:
    pool = ModelPool(["a/down", "b/up"], cooldown_s=10, failures_to_cooldown=1, clock=clock)
    lengths = []
    for _ in range(7):
        pool.record_failure("a/down", "connection", "refused")
        lengths.append(pool.stats("a/down").cooldown_until - clock.now)
        clock.advance(lengths[-1])
    assert lengths == [10, 20, 40, 80, 160, 160, 160]


def test_failures_of_calls_sent_before_the_cooldown_do_not_extend_it(clock: Clock) -> None:
    pool = ModelPool(["a/x", "b/y"], cooldown_s=60, failures_to_cooldown=2, clock=clock)
    for _ in range(2):
        pool.record_failure("a/x", "rate_limit", "429")
    until = pool.stats("a/x").cooldown_until
    clock.advance(5)
    for _ in range(4):  # in flight when it went to rest
        pool.record_failure("a/x", "rate_limit", "429")
    assert pool.stats("a/x").cooldown_until == until


def test_auth_failures_take_a_model_out_at_once(clock: Clock) -> None:
    pool = ModelPool(["a/nokey", "b/y"], failures_to_cooldown=3, clock=clock)
    pool.record_failure("a/nokey", "auth", "401")
    assert [s.model for s in pool.in_rotation()] == ["b/y"]


def test_when_every_model_rests_the_one_back_soonest_is_probed(clock: Clock) -> None:
    pool = ModelPool(["a/x", "b/y"], cooldown_s=60, failures_to_cooldown=1, clock=clock)
    pool.record_failure("a/x", "server", "500")
    clock.advance(10)
    pool.record_failure("b/y", "server", "500")
    assert pool.in_rotation() == []
    assert pool.choose(np.random.default_rng(0)).model == "a/x"


# --- outages ---------------------------------------------------------------------------------


def test_outage_is_how_long_every_model_has_been_failing(clock: Clock, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "an-unusual-key-4242")
    pool = ModelPool(["a/x", "b/y"], outage_s=300, clock=clock)
    pool.record_failure("a/x", "connection", "connection refused")
    clock.advance(100)
    assert pool.outage_for() == 0.0  # b has not failed: not an outage
    pool.record_failure("b/y", "auth", "invalid key an-unusual-key-4242")
    clock.advance(250)
    assert pool.outage_for() == 250.0
    pool.check_outage()  # 250 s: not yet
    clock.advance(51)
    with pytest.raises(ModelOutage) as info:
        pool.check_outage()
    message = str(info.value)
    assert "every model has been failing for 301 s" in message
    assert "a/x: last error connection: connection refused" in message
    assert f"b/y: last error auth: invalid key {REDACTED}" in message
    assert "an-unusual-key-4242" not in message


def test_one_success_ends_the_outage(clock: Clock) -> None:
    pool = ModelPool(["a/x", "b/y"], outage_s=10, clock=clock)
    pool.record_failure("a/x", "server", "500")
    pool.record_failure("b/y", "server", "500")
    clock.advance(20)
    pool.record_success("b/y", improved=False, cost_usd=None, tokens=None)
    assert pool.outage_for() == 0.0
    pool.check_outage()


# --- resume ----------------------------------------------------------------------------------


def test_replay_rebuilds_the_bandit_statistics() -> None:
    records = [
        ("a/x", True, 0.01, 500),
        ("b/y", False, None, 800),
        ("a/x", 0.5, 0.02, 700),
        ("gone/model", True, 1.0, 10),  # no longer in the pool
    ]
    live = ModelPool(["a/x", "b/y"], policy="ucb1")
    for model, improved, cost, tokens in records[:3]:
        live.record_success(model, improved=improved, cost_usd=cost, tokens=tokens)
    resumed = ModelPool(["a/x", "b/y"], policy="ucb1")
    assert resumed.replay(records) == 3
    for model in ("a/x", "b/y"):
        assert resumed.stats(model) == live.stats(model)
    a = resumed.stats("a/x")
    assert (a.calls, a.reward, a.cost, a.costed) == (2, 1.5, pytest.approx(0.03), 2)
    assert resumed.relative_costs() == live.relative_costs()


def test_pool_settings_are_checked() -> None:
    with pytest.raises(ModelSpecError, match="policy = 'greedy': use one of weighted, ucb1"):
        ModelPool(["a/x"], policy="greedy")
    with pytest.raises(ModelSpecError, match="a/x listed more than once"):
        ModelPool(["a/x", {"model": "a/x", "weight": 2}])
    with pytest.raises(ModelSpecError, match="at least one model"):
        ModelPool([])
    with pytest.raises(ValueError, match=r"improved = 2: use a bool or a credit in \[0, 1\]"):
        ModelPool(["a/x"]).record_success("a/x", improved=2)
    with pytest.raises(KeyError, match="b/y is not in the model pool"):
        ModelPool(["a/x"]).record_failure("b/y", "server")
