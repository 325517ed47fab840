"""Registrations that break a hook's contract fail with a PluginError naming the plugin."""

from __future__ import annotations

import json
import types

import pytest
from click.testing import CliRunner

from evoforge.evaluators import (
    Availability,
    EvalResult,
    Evaluator,
    Status,
    evaluator_origins,
    evaluators,
)
from evoforge.plugins import PluginError, hookimpl, pm, problems


@pytest.fixture
def plugin():
    """Register throwaway plugin modules under chosen names for one test."""
    registered = []

    def register(name: str, **hooks):
        module = types.ModuleType(name)
        for hook, func in hooks.items():
            setattr(module, hook, hookimpl(func))
        pm.register(module, name)
        registered.append(module)
        return module

    yield register
    for module in registered:
        pm.unregister(module)


class Good(Evaluator):
    name = "good"
    targets = ("cpu", "cuda")

    async def evaluate(self, source):
        return EvalResult(Status.OK)


class Nameless(Evaluator):
    async def evaluate(self, source):
        return EvalResult(Status.OK)


class Abstract(Evaluator):
    name = "abstract"


class BadTargets(Good):
    name = "bad-targets"
    targets = "cpu"


class Other(Good):
    pass  # same name "good", a different class


class Broken(Good):
    name = "broken"

    @classmethod
    def availability(cls):
        raise RuntimeError("driver query failed")


class Missing(Good):
    name = "missing"

    @classmethod
    def availability(cls):
        return Availability(False, "no CUDA device")


def test_a_good_evaluator_is_listed_with_its_plugin(plugin):
    plugin("acme_plugin", register_evaluators=lambda register: register(Good))
    assert evaluators()["good"] is Good
    assert evaluator_origins()["good"] == ("acme_plugin", "registered")
    assert evaluator_origins()["python"] == ("evoforge.evaluators._plugin", "builtin")


@pytest.mark.parametrize(
    ("registered", "expected"),
    [
        (Good(None), "registered <.*Good object.*> as an evaluator; .*the class, not an instance"),
        (
            int,
            "registered <class 'int'> as an evaluator; .*subclass of evoforge.evaluators.Evaluator",
        ),
        (Nameless, "evaluator class Nameless without a name; add `name: ClassVar"),
        (Abstract, "evaluator 'abstract' \\(Abstract\\), which does not implement evaluate"),
        (BadTargets, "evaluator 'bad-targets' has targets 'cpu'; use a tuple"),
    ],
    ids=["instance", "not-an-evaluator", "no-name", "no-evaluate", "bad-targets"],
)
def test_a_registration_that_breaks_the_contract_names_the_plugin(plugin, registered, expected):
    plugin("acme_plugin", register_evaluators=lambda register: register(registered))
    with pytest.raises(PluginError, match="^plugin 'acme_plugin'.*" + expected):
        evaluators()


def test_one_name_from_two_plugins_names_both(plugin):
    plugin("first_plugin", register_evaluators=lambda register: register(Good))
    plugin("second_plugin", register_evaluators=lambda register: register(Other))
    with pytest.raises(PluginError) as info:
        evaluators()
    message = str(info.value)
    assert "'first_plugin'" in message and "'second_plugin'" in message
    assert "both register the evaluator 'good'" in message and "EVOFORGE_PLUGINS" in message


def test_one_plugin_registering_two_classes_under_one_name(plugin):
    def both(register):
        register(Good)
        register(Other)

    plugin("acme_plugin", register_evaluators=both)
    with pytest.raises(PluginError, match="'acme_plugin' registers two different evaluators"):
        evaluators()


def test_the_same_class_twice_is_not_a_conflict(plugin):
    plugin("first_plugin", register_evaluators=lambda register: register(Good))
    plugin("second_plugin", register_evaluators=lambda register: register(Good))
    assert evaluators()["good"] is Good


def test_a_hook_that_raises_names_its_plugin(plugin):
    def explode(register):
        raise ImportError("no module named cupy")

    plugin("gpu_plugin", register_evaluators=explode)
    with pytest.raises(
        PluginError, match="plugin 'gpu_plugin' failed in register_evaluators\\(\\): ImportError"
    ):
        evaluators()


def test_a_problem_without_a_string_name(plugin):
    plugin("acme_plugin", register_problems=lambda register: register(3, "/tmp/x"))
    with pytest.raises(PluginError, match="plugin 'acme_plugin' registered a problem named 3"):
        problems()


def test_plugins_command_shows_availability_plugin_and_origin(plugin):
    from evoforge.evolve.cli import cli

    def both(register):
        register(Broken)
        register(Missing)

    plugin("acme_plugin", register_evaluators=both)
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)["evaluators"]}
    assert rows["missing"] == {
        "name": "missing",
        "targets": ["cpu", "cuda"],
        "available": False,
        "reason": "no CUDA device",
        "plugin": "acme_plugin",
        "origin": "registered",
    }
    assert rows["broken"]["available"] is False  # a raising availability() is not fatal
    assert rows["broken"]["reason"] == "availability() raised RuntimeError: driver query failed"
    assert rows["python"]["available"] is True and rows["python"]["origin"] == "builtin"

    text = CliRunner().invoke(cli, ["plugins"]).output
    assert "unavailable: no CUDA device  (plugin acme_plugin, registered)" in text


def test_problems_command_shows_a_problems_cascade_stages(plugin, make_problem):
    from evoforge.evolve.cli import cli

    spec = """
        name = "staged"
        objectives = {"s": "maximize"}
        stages = [{"name": "quick", "args": [3]}, {"name": "full"}]
        def evaluate_quick(o): return {}
        def evaluate(o): return {}
    """
    folder = make_problem(spec, "# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n")
    plugin("acme_plugin", register_problems=lambda register: register("staged", str(folder)))
    rows = json.loads(CliRunner().invoke(cli, ["problems", "--json"]).output)
    assert next(r for r in rows if r["name"] == "staged")["stages"] == ["quick", "full"]
    assert next(r for r in rows if r["name"] == "trivial")["stages"] == []
    assert "cells; stages quick > full  " in CliRunner().invoke(cli, ["problems"]).output
