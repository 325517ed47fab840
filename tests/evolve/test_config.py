"""Run configuration: defaults, validation, TOML files, and the stored round trip."""

from __future__ import annotations

import pytest

from evoforge.evolve import ConfigError, RunConfig, load_config_file
from evoforge.islands import IslandConfig


def test_defaults_are_usable():
    config = RunConfig(problem="trivial")
    assert config.model == "offline/mutator" and config.islands.count == 4
    assert config.workers >= 1 and config.model_slots >= 1


def test_one_worker_is_reproducible_and_sequential():
    config = RunConfig(problem="trivial", workers=1)
    assert config.reproducible and config.model_slots == 1


def test_remote_models_get_more_model_slots_than_evaluation_slots():
    config = RunConfig(problem="trivial", workers=2, model="openai/gpt-4o-mini")
    assert config.model_slots == 16


def test_round_trip_through_a_dict():
    config = RunConfig(problem="x", budget=9, islands=IslandConfig(count=2, selection="rank"))
    assert RunConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize(
    "field,value",
    [
        ("budget", 0),
        ("workers", 0),
        ("max_wall_s", -1.0),
        ("model", "gpt4"),
        ("llm_concurrency", 0),
    ],
)
def test_bad_values_name_the_setting(field, value):
    with pytest.raises(ConfigError, match=field):
        RunConfig(problem="x", **{field: value})


def test_unknown_settings_are_listed(tmp_path):
    with pytest.raises(ConfigError, match="unknown setting.*budgett"):
        RunConfig.from_dict({"problem": "x", "budgett": 3})
    with pytest.raises(ConfigError, match=r"unknown setting islands.countt.*known: count"):
        RunConfig.from_dict({"problem": "x", "islands": {"countt": 3}})


def test_toml_file(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text('budget = 50\nseed = 7\n[islands]\ncount = 3\nselection = "rank"\n')
    config = RunConfig.from_dict({"problem": "x", **load_config_file(path)})
    assert (config.budget, config.seed, config.islands.count) == (50, 7, 3)


def test_broken_toml_is_a_clear_error(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text("budget = = 3\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config_file(path)
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_config_file(tmp_path / "missing.toml")
