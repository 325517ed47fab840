"""Planted cheats for ``triton_softmax`` (``tests/evaluators/cheats/``) must all be rejected,
each by the guard its docstring names; the honest candidate must pass.

On CPU the candidates run in the Triton interpreter on the task's small shapes; cheats that
need a GPU (side streams, persisting L2) run only where there is one.
"""

from __future__ import annotations

import re

import pytest

from evoforge.evaluators import EvalResult, Status
from tests.evaluators.kernel_helpers import (
    CHEATS,
    NO_GPU,
    SOFTMAX,
    evaluate_all,
    gpu,
    measurable,
    needs_torch,
)

pytestmark = needs_torch

# name: (status, what the reason must say)
EVERYWHERE = {
    "honest": (Status.OK, ""),
    "modifies_input": (Status.INCORRECT, r"forward\(\) modified its input 0"),
    "empty_output": (Status.INCORRECT, r"differ beyond|NaN or infinite"),
    "cached_output": (Status.INCORRECT, r"trial [1-4], output 0 .*differ beyond"),
    "subclass_output": (Status.INCORRECT, r"must be exactly a torch\.Tensor"),
    "deferred_thread": (Status.INCORRECT, r"thread\(s\) it started were still running"),
    "patched_timer": (Status.SANDBOX_VIOLATION, r"replaced time\.perf_counter.*synchronize"),
    "precision_downgrade": (Status.INCORRECT, r"precision below float32|differ beyond"),
    "writes_before_input": (Status.INCORRECT, r"canary bytes just before input 0|modified"),
}
INTERPRETER_ONLY = {
    # On a GPU nothing checks bounds: a store one element past a buffer usually lands in
    # allocator slack unnoticed. The interpreter's bounds checks catch it.
    "out_of_bounds": (Status.INCORRECT, r"out-of-bounds store in Triton kernel _softmax"),
}
GPU_ONLY = {
    "side_stream": (Status.INCORRECT, r"differ beyond|NaN or infinite"),
    "persisting_l2": (Status.SANDBOX_VIOLATION, r"persisting-L2 limit"),
}


def _source(name: str) -> str:
    return (CHEATS / f"{name}.py").read_text()


@pytest.fixture(scope="module")
def verdicts() -> dict[str, EvalResult]:
    """Every candidate that runs on this host, evaluated once, concurrently."""
    names = [*EVERYWHERE, *(INTERPRETER_ONLY if NO_GPU else GPU_ONLY)]
    results = evaluate_all(measurable(SOFTMAX), [_source(n) for n in names], workers=2)
    return dict(zip(names, results, strict=True))


def _check(result: EvalResult, status: Status, reason: str) -> None:
    error = result.artifacts.get("error", "")
    assert result.status is status, (result.status, result.artifacts)
    if status is Status.OK:
        assert "max_abs_error" in result.metrics and result.objectives
    else:
        assert re.search(reason, error), error


def test_every_fixture_documents_its_guard():
    for path in CHEATS.glob("*.py"):
        if path.name == "__init__.py":
            continue
        doc = path.read_text().split('"""')[1]
        assert "Guard" in doc or path.stem == "honest", path.name
    known = {*EVERYWHERE, *INTERPRETER_ONLY, *GPU_ONLY}
    assert {p.stem for p in CHEATS.glob("*.py")} - {"__init__"} == known


@pytest.mark.slow
@pytest.mark.parametrize("name", [*EVERYWHERE, *INTERPRETER_ONLY])
def test_cheat_is_rejected(verdicts, name):
    if name in INTERPRETER_ONLY and not NO_GPU:
        pytest.skip("bounds are checked only in the Triton interpreter (no GPU)")
    status, reason = {**EVERYWHERE, **INTERPRETER_ONLY}[name]
    _check(verdicts[name], status, reason)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("name", list(GPU_ONLY))
def test_gpu_cheat_is_rejected(verdicts, name):
    _check(verdicts[name], *GPU_ONLY[name])


@gpu
@pytest.mark.gpu
def test_honest_timing_is_not_flagged(verdicts):
    honest = verdicts["honest"]
    assert honest.metrics["suspicious"] is False
    assert honest.metrics["speedup_vs_eager"] < 10
