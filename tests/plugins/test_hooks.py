"""Every hook has its own test here (the meta-test at the bottom checks it)."""

from __future__ import annotations

import asyncio
import inspect
import sys
import types

import click
import pytest
from click.testing import CliRunner

from evoforge.evaluators import EvalResult, Evaluator, Status, evaluators
from evoforge.evolve import RunConfig, start_run
from evoforge.evolve.models._client import _ready_prefixes, prepare
from evoforge.islands import IslandConfig
from evoforge.plugins import (
    _hookspecs,
    hookimpl,
    model_providers,
    pm,
    problems,
    selection_strategies,
)
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC


@pytest.fixture
def plugin():
    """Register a throwaway plugin module for one test."""
    registered = []

    def register(**hooks):
        module = types.ModuleType(f"test_plugin_{len(registered)}")
        for name, func in hooks.items():
            setattr(module, name, hookimpl(func))
        pm.register(module)
        registered.append(module)
        return module

    yield register
    for module in registered:
        pm.unregister(module)


class EchoEvaluator(Evaluator):
    name = "echo"

    async def evaluate(self, source):
        return EvalResult(Status.OK, metrics={"score": 1.0}, objectives={"score": 1.0})


def test_hook_register_evaluators(plugin):
    plugin(register_evaluators=lambda register: register(EchoEvaluator))
    assert evaluators()["echo"] is EchoEvaluator
    assert "python" in evaluators()  # built-ins register through the same hook


def test_hook_register_problems(plugin, make_problem):
    folder = make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)
    plugin(register_problems=lambda register: register("tiny_plugin", str(folder)))
    assert problems()["tiny_plugin"] == str(folder)
    assert {"circle_packing", "trivial"} <= set(problems())


def test_hook_register_problem_adapters(plugin, make_problem, tmp_path):
    """A plugin's format: a ``.tiny`` file holding the seed's two numbers becomes a problem."""
    from evoforge.evolve import resolve
    from evoforge.problems import load_problem
    from evoforge.problems.adapters import Adapted, Adapter, problem_adapters

    template = make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)

    def adapt(path, options):
        folder = tmp_path / "adapted"
        folder.mkdir(exist_ok=True)
        a, b = path.read_text().split()
        seed = (template / "seed.py").read_text().replace("0.5", a).replace("0.25", b)
        (folder / "problem.py").write_text((template / "problem.py").read_text())
        (folder / "seed.py").write_text(seed)
        return Adapted("tiny", path, (load_problem(folder),), ("made from a .tiny file",))

    tiny = Adapter("tiny", detect=lambda path: path.suffix == ".tiny", adapt=adapt)
    plugin(register_problem_adapters=lambda register: register(tiny))
    assert list(problem_adapters())[:2] == ["kernelbench", "openevolve"]  # built-ins first
    assert problem_adapters()["tiny"] is tiny
    source = tmp_path / "numbers.tiny"
    source.write_text("0.75 1.5")
    resolved = resolve(str(source))
    assert resolved.adapter == "tiny" and resolved.notes == ("made from a .tiny file",)
    assert "a = 0.75" in resolved.problems[0].seed_source
    config = RunConfig(problem=str(resolved.problems[0].spec_path.parent), budget=3, workers=1)
    _, report = asyncio.run(start_run(config, tmp_path / "t.db"))
    assert report.status == "finished"


def test_a_problem_adapter_must_be_an_adapter(plugin):
    from evoforge.plugins import PluginError
    from evoforge.problems.adapters import problem_adapters

    plugin(register_problem_adapters=lambda register: register("not an adapter"))
    with pytest.raises(PluginError, match="register an evoforge.problems.adapters.Adapter"):
        problem_adapters()


def test_hook_register_selection_strategies(plugin, make_problem, tmp_path):
    calls = []

    def first(scores, rng):
        calls.append(len(scores))
        return 0

    plugin(register_selection_strategies=lambda register: register("first", first))
    assert selection_strategies()["first"] is first
    config = RunConfig(
        problem=str(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)),
        budget=4,
        workers=1,
        islands=IslandConfig(selection="first"),
    )
    asyncio.run(start_run(config, tmp_path / "s.db"))
    assert calls  # the run selected parents with the plugin's strategy


def test_hook_register_models(plugin):
    calls = []
    plugin(register_models=lambda register: register("custom", lambda: calls.append(1)))
    assert "custom" in model_providers() and "offline" in model_providers()
    _ready_prefixes.discard("custom")
    prepare("custom/some-model")
    prepare("custom/other-model")
    assert calls == [1]  # set up once, lazily, on first use


def test_hook_register_commands(plugin):
    from evoforge.evolve.cli import cli

    @click.command("hello")
    def hello():
        click.echo("hello from a plugin")

    plugin(register_commands=lambda cli: cli.add_command(hello))
    pm.hook.register_commands(cli=cli)
    result = CliRunner().invoke(cli, ["hello"])
    assert result.output == "hello from a plugin\n"
    cli.commands.pop("hello")


@pytest.fixture
def observed_run(plugin, make_problem, tmp_path):
    seen = {"program_added": [], "island_event": [], "run_finished": []}
    plugin(
        program_added=lambda run_id, program, added: seen["program_added"].append(
            (program.seq, program.status, added)
        ),
        island_event=lambda run_id, kind, island, data: seen["island_event"].append(kind),
        run_finished=lambda run_id, status, reason: seen["run_finished"].append(status),
    )
    config = RunConfig(
        problem=str(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)),
        budget=30,
        workers=1,
        islands=IslandConfig(count=2, migration_interval=2),
    )
    asyncio.run(start_run(config, tmp_path / "o.db"))
    return seen


def test_hook_program_added(observed_run):
    added = observed_run["program_added"]
    assert added[0] == (0, Status.OK, 0)
    assert [seq for seq, _, _ in added] == sorted(seq for seq, _, _ in added)
    assert any(flag for _, _, flag in added)


def test_hook_island_event(observed_run):
    assert "migration" in observed_run["island_event"]


def test_hook_run_finished(observed_run):
    assert observed_run["run_finished"] == ["finished"]


def test_every_hook_has_its_own_test():
    hooks = {
        name
        for name, value in inspect.getmembers(_hookspecs, inspect.isfunction)
        if hasattr(value, "evoforge_spec")
    }
    tests = {
        name.removeprefix("test_hook_")
        for name in dir(sys.modules[__name__])
        if name.startswith("test_hook_")
    }
    assert hooks and hooks == tests, f"hooks without a test: {sorted(hooks - tests)}"


def test_a_plugin_replaced_by_another_is_collected_again():
    # Each round frees the last plugin's hook function; CPython reuses freed memory at once, so
    # a cache keyed by ids would hand a round the strategy of the round before.
    for round_ in range(30):
        module = types.ModuleType("test_plugin_round")

        def strategy(scores, rng, _round=round_):
            return _round

        def register_selection_strategies(register, _strategy=strategy):
            register("round", _strategy)

        module.register_selection_strategies = hookimpl(register_selection_strategies)
        pm.register(module)
        try:
            assert selection_strategies()["round"]([], None) == round_
        finally:
            pm.unregister(module)
        del module, register_selection_strategies, strategy
