"""The KernelBench protocol shared by the triton and cuda evaluators: options, comparison,
statuses, and what the runner does with the task and the candidate."""

from __future__ import annotations

import numpy as np
import pytest

from evoforge.evaluators import Status
from evoforge.evaluators.kernels.kernelbench._compare import (
    MalformedOutput,
    compare_outputs,
    decode,
    precision_check,
)
from evoforge.evaluators.kernels.kernelbench._evaluator import read_config, torch_cuda_version
from evoforge.evaluators.kernels.kernelbench._timing import summarize
from evoforge.problems import ProblemSpecError, load_problem
from tests.evaluators.kernel_helpers import (
    SEED,
    SOFTMAX_TASK,
    dedent,
    evaluate_all,
    make_kernel_problem,
    measurable,
    needs_torch,
)

# --- comparison (numpy, in the trusted runner) -------------------------------------------------


def _wire(*arrays: np.ndarray, dtype: str | None = None) -> tuple[list[dict], bytes]:
    metas, payload = [], b""
    for a in arrays:
        metas.append(
            {
                "shape": list(a.shape),
                "dtype": dtype or str(a.dtype),
                "device": "cpu",
                "wire": str(a.dtype),
                "offset": len(payload),
                "nbytes": a.nbytes,
            }
        )
        payload += a.tobytes()
    return metas, payload


def _compare(ref: np.ndarray, out: np.ndarray, **kw) -> tuple[str, float]:
    want, want_bytes = _wire(ref)
    got, got_bytes = _wire(out)
    return compare_outputs(0, want, want_bytes, got, got_bytes, **kw)


REF = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)


def test_equal_outputs_pass_with_their_largest_error():
    out = REF + np.float32(5e-5)
    why, error = _compare(REF, out)
    assert why == ""
    assert error == pytest.approx(5e-5, rel=1e-2)


@pytest.mark.parametrize(
    ("out", "reason"),
    [
        (REF.reshape(4, 3), "shape is [4, 3]; expected [3, 4]"),
        (REF.astype(np.float64), "dtype is 'float64'; expected 'float32'"),
        (np.where(REF > 0.5, np.nan, REF).astype(np.float32), "NaN or infinite where"),
        (REF + np.float32(1e-3), "values differ beyond atol=0.0001 rtol=0.0001"),
    ],
    ids=["shape", "dtype", "nan-where-finite", "beyond-tolerance"],
)
def test_wrong_outputs_are_named(out, reason):
    why, _ = _compare(REF, out)
    assert reason in why


def test_non_finite_reference_values_must_be_matched_exactly():
    ref = np.array([np.inf, np.nan, 1.0], dtype=np.float32)
    assert _compare(ref, ref.copy())[0] == ""
    why, _ = _compare(ref, np.array([-np.inf, np.nan, 1.0], dtype=np.float32))
    assert "differ where the reference is NaN or infinite" in why


def test_declared_tolerances_replace_the_dtype_defaults():
    out = REF + np.float32(1e-3)
    assert _compare(REF, out, atol=1e-2, rtol=0.0)[0] == ""


def test_a_missing_output_is_counted():
    want, want_bytes = _wire(REF, REF)
    got, got_bytes = _wire(REF)
    why, _ = compare_outputs(2, want, want_bytes, got, got_bytes)
    assert why == "trial 2: forward() returned 1 tensor(s); the reference returns 2"


def test_descriptions_that_do_not_fit_the_payload_are_malformed():
    metas, payload = _wire(REF)
    metas[0]["nbytes"] += 4
    with pytest.raises(MalformedOutput):
        decode(metas[0], payload)
    metas[0].update(nbytes=REF.nbytes, wire="object")
    with pytest.raises(MalformedOutput):
        decode(metas[0], payload)


def test_precision_check_catches_half_precision_the_tolerance_lets_through():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((64, 1000))
    truth = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)  # small values
    ref32 = truth.astype(np.float32)
    half = truth.astype(np.float16).astype(np.float32)
    assert _compare(ref32, half)[0] == ""  # elementwise, within atol = rtol = 1e-4
    why, measured = precision_check(ref32, truth, half, "float32", None)
    assert "precision below float32" in why
    assert measured["relative_error_vs_float64"] > 1e-4
    assert precision_check(ref32, truth, ref32 + np.float32(1e-9), "float32", None)[0] == ""


def test_summarize_gives_median_iqr_and_cv():
    stats = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert stats["median_ms"] == 3.0
    assert stats["iqr_ms"] == 2.0
    assert stats["min_ms"] == 1.0
    assert stats["cv"] == pytest.approx(np.std([1, 2, 3, 4, 100], ddof=1) / 22.0)
    with pytest.raises(ValueError, match="no samples"):
        summarize([])


# --- options --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ('{"trials": 3}', "options['trials']"),
        ('{"task_file": "nope.py"}', "options['task_file']"),
        ('{"atol": -1}', "options['atol']"),
        ('{"timing_repeats": 5}', "options['timing_repeats']"),
    ],
    ids=["too-few-trials", "missing-task", "negative-atol", "too-few-repeats"],
)
def test_bad_options_are_rejected_naming_the_field(tmp_path, options, field):
    problem = load_problem(make_kernel_problem(tmp_path / "p", options=options))
    with pytest.raises(ProblemSpecError, match=field.replace("[", r"\[").replace("]", r"\]")):
        read_config(problem)


@needs_torch
def test_torch_build_is_read_without_importing_it():
    import torch

    assert torch_cuda_version() == torch.version.cuda


# --- the runner, end to end (CPU: the Triton interpreter) -------------------------------------

LINEAR_TASK = """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.linear = nn.Linear(n, 7)

        def forward(self, x):
            return torch.relu(self.linear(x))

    def get_inputs():
        return [torch.randn(5, 33)]

    def get_init_inputs():
        return [33]
"""
LINEAR_SEED = """
    import torch
    import torch.nn as nn

    # EVOLVE-BLOCK-START
    class ModelNew(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.linear = nn.Linear(n, 7)

        def forward(self, x):
            return torch.clamp(self.linear(x), min=0.0)
    # EVOLVE-BLOCK-END
"""


@needs_torch
@pytest.mark.slow
def test_statuses_of_failing_candidates(tmp_path):
    problem = measurable(make_kernel_problem(tmp_path / "p", timeout_s=6))
    results = evaluate_all(
        problem,
        [
            SEED,
            "class ModelNew(:\n",
            "import torch\nx = 1\n",
            dedent(
                """
                import torch.nn as nn
                class ModelNew(nn.Module):
                    def forward(self, x):
                        raise ValueError("no kernel yet")
                """
            ),
            dedent(
                """
                import torch, torch.nn as nn
                class ModelNew(nn.Module):
                    def forward(self, x):
                        return torch.softmax(x, -1)[:, :-1]
                """
            ),
            dedent(
                """
                import torch.nn as nn
                class ModelNew(nn.Module):
                    def forward(self, x):
                        while True:
                            pass
                """
            ),
            dedent(
                """
                import ctypes
                import torch.nn as nn
                class ModelNew(nn.Module):
                    def forward(self, x):
                        return ctypes.string_at(0)  # what a wild pointer in a kernel does
                """
            ),
        ],
    )
    seed, syntax, no_model, raises, short, loops, segfault = results
    assert seed.status is Status.OK, seed.artifacts
    assert seed.objectives["max_abs_error"] < 1e-5
    assert seed.metrics["trials"] == 5
    assert seed.metrics["inputs"].startswith("get_inputs_small(trial)")
    assert len(set(seed.metrics["shapes"])) == 4  # every small shape, the first one twice
    assert seed.metrics["bounds_checked"] > 0
    assert seed.device["target"] == "cpu-interpret"
    assert syntax.status is Status.SYNTAX_ERROR
    assert no_model.status is Status.RUNTIME_ERROR
    assert "defines no class `ModelNew(nn.Module)`" in no_model.artifacts["error"]
    assert raises.status is Status.RUNTIME_ERROR
    assert "no kernel yet" in raises.artifacts["traceback"]
    assert short.status is Status.INCORRECT
    assert "shape is [13, 76]; expected [13, 77]" in short.artifacts["error"]
    assert loops.status is Status.TIMEOUT
    assert segfault.status is Status.CRASHED
    assert "SIGSEGV" in segfault.artifacts["error"]


@needs_torch
def test_weights_come_from_the_same_hidden_seed_for_model_and_model_new(tmp_path):
    folder = make_kernel_problem(tmp_path / "p", task=LINEAR_TASK, seed=LINEAR_SEED)
    unseeded = LINEAR_SEED.replace(
        "self.linear = nn.Linear(n, 7)",
        "torch.manual_seed(0)\n            self.linear = nn.Linear(n, 7)",
    )
    same, fixed_seed = evaluate_all(measurable(folder), [dedent(LINEAR_SEED), dedent(unseeded)])
    assert same.status is Status.OK, same.artifacts
    assert same.metrics["inputs"].startswith("get_inputs()")  # the task has no small inputs
    assert fixed_seed.status is Status.INCORRECT  # weights it chose itself do not match


@needs_torch
def test_a_failing_task_is_blamed_on_the_task(tmp_path):
    broken = SOFTMAX_TASK.replace("return torch.softmax(x, dim=-1)", "raise RuntimeError('bug')")
    (result,) = evaluate_all(measurable(make_kernel_problem(tmp_path / "p", task=broken)), [SEED])
    assert result.status is Status.CRASHED
    assert "the task's reference" in result.artifacts["error"]
    assert "not the candidate" in result.artifacts["error"]


@needs_torch
def test_each_evaluation_draws_new_hidden_inputs(tmp_path):
    tell = dedent(
        """
        import torch.nn as nn
        class ModelNew(nn.Module):
            def forward(self, x):
                raise ValueError(f"saw {x.sum().item()!r}")
        """
    )
    problem = measurable(make_kernel_problem(tmp_path / "p"))
    first, second = evaluate_all(problem, [tell, tell])
    assert "saw" in first.artifacts["error"]
    assert first.artifacts["error"] != second.artifacts["error"]
