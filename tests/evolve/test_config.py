"""Run configuration: defaults, validation, TOML files, and the stored round trip."""

from __future__ import annotations

import pytest

from evoforge.evolve import ConfigError, RunConfig, load_config_file
from evoforge.evolve.models import ModelSpec
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


@pytest.mark.parametrize(
    ("model", "wrong"),
    [
        ("gpt4", "it names no provider"),
        ("/gpt4", "the provider before '/' is empty"),
        ("openai/", "the model name after '/' is empty"),
    ],
    ids=["no-slash", "no-provider", "no-name"],
)
def test_a_model_string_is_checked_once_with_one_message(model, wrong):
    """``model`` of a run and ``model`` of a ``[[models]]`` table (or a ModelSpec) are checked
    by one rule: the same message after the field's name, saying what is wrong and the fix."""
    messages = []
    for make in (
        lambda: RunConfig(problem="x", model=model),
        lambda: RunConfig.from_dict({"problem": "x", "models": [{"model": model}]}),
        lambda: ModelSpec(model),
    ):
        with pytest.raises(ConfigError) as info:
            make()
        messages.append(str(info.value).split(f"model = {model!r}: ", 1)[1])
    assert len(set(messages)) == 1
    assert messages[0].startswith(wrong)
    assert "'<provider>/<model>'" in messages[0] and "'offline/mutator'" in messages[0]


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


# The values a user reported as accepted or crashing: each is now one line naming the field,
# the value and what is allowed, whichever way it arrives (Python, TOML, the command line).
BAD_VALUES = {
    "workers-float": ({"workers": 2.5}, "workers = 2.5: expected a whole number"),
    "seed-text": ({"seed": "abc"}, "seed = 'abc': expected a whole number"),
    "temperature-text": ({"temperature": "hot"}, "temperature = 'hot': expected a number"),
    "budget-bool": ({"budget": True}, "budget = True: expected a whole number"),
    "budget-text": ({"budget": "10"}, "budget = '10': expected a whole number"),
    "islands-count-float": ({"islands": {"count": 2.5}}, "islands.count = 2.5: expected a whole"),
    "islands-not-a-table": ({"islands": 3}, "islands = 3: expected a table of settings"),
    "budget-nan": ({"max_wall_s": float("nan")}, "max_wall_s = nan: expected a finite number"),
    "ensemble-unknown": ({"ensemble": "greedy"}, "ensemble = 'greedy': expected one of"),
}


@pytest.mark.parametrize(("settings", "message"), BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_bad_values_are_one_line_naming_field_value_and_what_is_allowed(settings, message):
    with pytest.raises(ConfigError) as python:
        RunConfig(problem="x", **settings)
    assert message in str(python.value) and "\n" not in str(python.value)
    with pytest.raises(ConfigError) as stored:
        RunConfig.from_dict({"problem": "x", **settings}, origin="run.toml")
    assert str(stored.value) == f"run.toml: {python.value}"


TOML_VALUES = {
    "workers-float": ("workers = 2.5", "workers = 2.5: expected a whole number"),
    "seed-text": ('seed = "abc"', "seed = 'abc': expected a whole number"),
    "temperature-text": ('temperature = "hot"', "temperature = 'hot': expected a number"),
    "budget-bool": ("budget = true", "budget = True: expected a whole number"),
    "budget-text": ('budget = "10"', "budget = '10': expected a whole number"),
    "islands-count": ("[islands]\ncount = 2.5", "islands.count = 2.5: expected a whole number"),
}


@pytest.mark.parametrize(("toml", "message"), TOML_VALUES.values(), ids=TOML_VALUES.keys())
def test_the_command_line_says_the_same_in_one_line(tmp_path, toml, message):
    from click.testing import CliRunner

    from evoforge.evolve.cli import cli

    path = tmp_path / "run.toml"
    path.write_text(toml + "\n")
    result = CliRunner().invoke(cli, ["run", "trivial", "--config", str(path), "--db", "x.db"])
    assert result.exit_code == 1
    assert result.output == f"Error: {path}: {message}\n" or (
        result.output.startswith(f"Error: {path}: ") and message in result.output
    )
    assert result.output.count("\n") == 1 and not (tmp_path / "x.db").exists()


def test_sections_built_in_python_name_their_place_in_the_configuration():
    with pytest.raises(ConfigError, match=r"^islands.count = 0: must be at least 1$"):
        IslandConfig(count=0)
    with pytest.raises(ConfigError, match=r"^unknown setting islands.countt \(= 1\); known: count"):
        IslandConfig(countt=1)
