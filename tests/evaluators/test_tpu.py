"""The ``tpu`` evaluator on CPU (Pallas interpret mode): correctness, cheats, honest timing."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evoforge.evaluators import Status
from evoforge.evaluators.devices._inventory import inventory
from evoforge.evaluators.kernels._io import read_kernel_config as read_config
from evoforge.evaluators.kernels.tpu._evaluator import NO_TPU, TpuEvaluator
from evoforge.evolve import measurable_problem
from evoforge.problems import ProblemSpecError, load_problem

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = ROOT / "problems" / "builtin" / "pallas_softmax"
pytestmark = pytest.mark.skipif(
    not TpuEvaluator.availability().available, reason=str(TpuEvaluator.availability())
)
HAS_TPU = bool(inventory().of_kind("tpu"))

SEED = (SOFTMAX / "seed.py").read_text()
CANDIDATES = {
    "seed": SEED,
    # exp(x) without the row maximum overflows float32 for inputs of scale 30
    "naive": SEED.replace("e = jnp.exp(x - m)", "e = jnp.exp(x)"),
    "crash": SEED.replace(
        "def softmax(x):\n",
        "def softmax(x):\n    import os, signal\n    os.kill(os.getpid(), signal.SIGSEGV)\n",
    ),
    # a correct answer, and the input zeroed behind JAX's back
    "modifies_input": SEED.replace(
        "    rows, cols = x.shape\n",
        "    import ctypes\n    out = jax.nn.softmax(x, axis=-1)\n"
        "    ctypes.memset(x.unsafe_buffer_pointer(), 0, x.nbytes)\n    rows, cols = x.shape\n",
    ),
    "no_kernel": SEED.replace(
        "    rows, cols = x.shape\n",
        "    return jax.nn.softmax(x, axis=-1)\n    rows, cols = x.shape\n",
    ),
    "wrong_shape": SEED.replace(
        "    return pl.pallas_call(", "    return x[:, :1] * 0 + pl.pallas_call("
    ).replace("    )(x)\n", "    )(x)[:, :1]\n"),
}


def _measurable():
    """The problem as a run on this host sees it (correctness-only without a TPU)."""
    return measurable_problem(load_problem(SOFTMAX), TpuEvaluator)[0]


@pytest.fixture(scope="module")
def results():
    """Every candidate above, evaluated once (two at a time; about 20 s on 2 busy cores)."""

    async def go():
        async with TpuEvaluator(_measurable(), workers=2) as evaluator:
            done = await asyncio.gather(*(evaluator.evaluate(s) for s in CANDIDATES.values()))
        return dict(zip(CANDIDATES, done, strict=True))

    return asyncio.run(go())


@pytest.mark.slow
def test_the_seed_kernel_is_correct_and_scored_against_a_float64_reference(results):
    result = results["seed"]
    assert result.status is Status.OK, result.artifacts
    assert result.metrics["trials"] == 5 and result.metrics["pallas_calls"] >= 5
    assert 0 < result.metrics["max_abs_error"] < 1e-6  # float32 rounding, seen in float64
    assert result.metrics["error_ratio"] <= 1.0
    assert result.device["target"] == ("tpu" if HAS_TPU else "cpu-interpret")
    assert result.device["jax"] and result.device["device_kind"] in ("cpu", "tpu")
    if not HAS_TPU:
        assert "speedup" not in result.metrics and "kernel_us" not in result.metrics


@pytest.mark.slow
def test_overflowing_kernel_is_incorrect_with_the_failing_input(results):
    result = results["naive"]
    assert result.status is Status.INCORRECT
    assert "NaN mismatch" in result.artifacts["error"]
    assert "(300, 200) float32" in result.artifacts["failing_input"]


@pytest.mark.slow
def test_a_kernel_that_crashes_the_process_is_reported_as_crashed(results):
    result = results["crash"]
    assert result.status is Status.CRASHED
    assert "SIGSEGV" in result.artifacts["error"]


@pytest.mark.slow
def test_a_kernel_that_modifies_its_input_is_rejected(results):
    result = results["modifies_input"]
    assert result.status is Status.INCORRECT
    assert "modified its inputs (trial 0 input 0" in result.artifacts["error"]


@pytest.mark.slow
def test_an_entry_without_a_pallas_kernel_is_rejected(results):
    result = results["no_kernel"]
    assert result.status is Status.INCORRECT
    assert "never called pl.pallas_call" in result.artifacts["error"]


@pytest.mark.slow
def test_a_wrong_output_shape_is_rejected(results):
    result = results["wrong_shape"]
    assert result.status is Status.INCORRECT
    assert "got (300, 1) float32, expected (300, 200) float32" in result.artifacts["error"]


@pytest.mark.skipif(HAS_TPU, reason="this host has a TPU")
def test_without_a_tpu_timing_objectives_are_unmeasurable():
    assert TpuEvaluator.unmeasurable(load_problem(SOFTMAX)) == {"speedup": NO_TPU}


def test_spec_declarations_are_validated(make_problem):
    spec = """
        name = "k"
        evaluator = "tpu"
        entry = "f"
        objectives = {"max_abs_error": "minimize"}
        inputs = [[((64, 128), "float32")]]
        seed_source = "# EVOLVE-BLOCK-START\\n# EVOLVE-BLOCK-END\\n"

        def reference(x):
            return x

        def evaluate(metrics):
            return metrics
    """
    with pytest.raises(ProblemSpecError, match="every dimension is a power of two"):
        read_config(load_problem(make_problem(spec, name="aligned")))
    odd = spec.replace("(64, 128)", "(63, 128)")
    config = read_config(load_problem(make_problem(odd, name="odd")))
    assert config["cases"] == [[([63, 128], "float32", 1.0)]]
    assert (config["atol"], config["rtol"], config["trials"]) == (1e-4, 1e-4, 5)
    few = odd.replace('evaluator = "tpu"', 'evaluator = "tpu"\n        options = {"trials": 2}')
    with pytest.raises(ProblemSpecError, match=r"options\['trials'\]: found 2"):
        read_config(load_problem(make_problem(few, name="few")))
    nameless = odd.replace("def reference(x):\n            return x\n", "")
    with pytest.raises(ProblemSpecError, match="reference: missing"):
        read_config(load_problem(make_problem(nameless, name="noref")))


def test_the_timing_path_runs_interleaved_against_the_reference(tmp_path):
    """The code a TPU host runs, exercised on the CPU backend by calling the runner directly.

    The evaluator itself never asks for timing in interpret mode (see the test above).
    """
    request = {
        "source": SEED,
        "entry": "softmax",
        "spec_path": str(SOFTMAX / "problem.py"),
        "cases": [[[[96, 130], "float32", 1.0]]],
        "trials": 5,
        "atol": 1e-6,
        "rtol": 1e-4,
        "reference_precision": "float64",
        "interpret": True,
        "time": True,
        "warmups": 1,
        "repeats": 3,
        "timeout_s": 120,
        "memory_mb": 4096,
        "user": None,
        "allow_root": True,  # as root, candidates stay root only when asked
        "network": "host",
    }
    done = subprocess.run(
        [sys.executable, "-m", "evoforge.evaluators.kernels.tpu"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    reply = json.loads(done.stdout.strip().splitlines()[-1])
    assert reply["status"] == "ok", reply
    metrics = reply["metrics"]
    assert metrics["kernel_us"] > 0 and metrics["reference_us"] > 0
    assert metrics["speedup"] == pytest.approx(metrics["reference_us"] / metrics["kernel_us"])
    assert isinstance(metrics["speedup_significant"], bool)
    assert reply["artifacts"]["timed_device"]
