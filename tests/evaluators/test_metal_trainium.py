"""``metal`` and ``trainium``: on a host without them, they say exactly why and never fake
a result; where a session asks for them, it refuses with that reason."""

from __future__ import annotations

import asyncio
import platform
import sys

import pytest

from evoforge.evaluators.devices._inventory import inventory, neuron_toolchain
from evoforge.evaluators.kernels._runner_evaluator import EvaluatorUnavailableError
from evoforge.evaluators.kernels.metal._evaluator import MetalEvaluator
from evoforge.evaluators.kernels.trainium._evaluator import TrainiumEvaluator
from evoforge.evolve import RunConfig, start_run
from evoforge.evolve.config._run import ConfigError
from evoforge.problems import load_problem

KERNEL_SPEC = """
    name = "{name}"
    evaluator = "{evaluator}"
    entry = "add"
    objectives = {{"speedup": "maximize"}}
    inputs = [[((1000,), "float32"), ((1000,), "float32")]]
    seed_source = "// EVOLVE-BLOCK-START\\n// EVOLVE-BLOCK-END\\n"

    def reference(a, b):
        return a + b

    def evaluate(metrics):
        return metrics
"""

not_macos = pytest.mark.skipif(platform.system() == "Darwin", reason="this host is macOS")
no_neuron = pytest.mark.skipif(
    bool(neuron_toolchain() and inventory().of_kind("neuron")), reason="this host has Neuron"
)


@not_macos
def test_metal_says_it_needs_macos():
    availability = MetalEvaluator.availability()
    assert not availability.available
    expected = f"not macOS ({platform.system()} {platform.machine()})"
    assert str(availability) == f"unavailable: {expected}"


@no_neuron
def test_trainium_says_what_is_missing():
    availability = TrainiumEvaluator.availability()
    assert not availability.available
    if not neuron_toolchain():
        assert "Neuron SDK not installed" in availability.reason
        assert "placeholder" in availability.reason or "own package index" in availability.reason
    if not inventory().of_kind("neuron"):
        assert "no /dev/neuron* device" in availability.reason


def test_a_placeholder_neuronx_cc_wheel_is_named_as_such(tmp_path, monkeypatch):
    """A distribution called neuronx-cc without the neuronxcc module: the PyPI placeholder."""
    dist = tmp_path / "neuronx_cc-0.0.0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: neuronx-cc\nVersion: 0.0.0.1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert neuron_toolchain() == ""
    reason = TrainiumEvaluator.availability().reason
    assert "the PyPI 'neuronx-cc' is a placeholder wheel" in reason


@pytest.mark.parametrize(
    "cls",
    [
        pytest.param(MetalEvaluator, marks=not_macos, id="metal"),
        pytest.param(TrainiumEvaluator, marks=no_neuron, id="trainium"),
    ],
)
def test_evaluate_on_an_unavailable_host_refuses_instead_of_faking(cls, make_problem):
    problem = load_problem(make_problem(KERNEL_SPEC.format(name=cls.name, evaluator=cls.name)))

    async def go():
        async with cls(problem) as evaluator:
            return await evaluator.evaluate("// a kernel\n")

    with pytest.raises(EvaluatorUnavailableError, match=f"evaluator '{cls.name}' unavailable: "):
        asyncio.run(go())


@pytest.mark.parametrize(
    "cls",
    [
        pytest.param(MetalEvaluator, marks=not_macos, id="metal"),
        pytest.param(TrainiumEvaluator, marks=no_neuron, id="trainium"),
    ],
)
def test_a_session_refuses_to_start_with_the_reason(cls, make_problem, tmp_path):
    folder = make_problem(KERNEL_SPEC.format(name=cls.name, evaluator=cls.name))
    config = RunConfig(problem=str(folder), budget=1)
    with pytest.raises(ConfigError, match=f"evaluator '{cls.name}' cannot run here: ") as error:
        asyncio.run(start_run(config, tmp_path / "runs.db"))
    assert cls.availability().reason in str(error.value)


def test_runner_modules_import_without_their_platform_libraries():
    """The runners must at least load (and fail at run time, saying why) on any host."""
    import importlib

    for cls in (MetalEvaluator, TrainiumEvaluator):
        module = importlib.import_module(f"{cls.runner}.__main__")  # what `python -m` runs
        assert callable(module.main)
    assert "Metal" not in sys.modules and "neuronxcc" not in sys.modules
