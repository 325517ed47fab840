"""The ``triton`` evaluator: availability, what it cannot measure without a GPU, the built-in
``triton_softmax`` problem evolving offline in interpreter mode, and (on a GPU) timing."""

from __future__ import annotations

import asyncio
import importlib.util
import statistics

import pytest

from evoforge.archive import Archive
from evoforge.evaluators import Status, TritonEvaluator, evaluator_class
from evoforge.evaluators.kernels.kernelbench._evaluator import read_config
from evoforge.evolve import RunConfig, start_run
from evoforge.problems import ProblemSpecError, load_problem
from tests.evaluators.kernel_helpers import (
    NO_GPU,
    SEED,
    SOFTMAX,
    evaluate_all,
    gpu,
    make_kernel_problem,
    measurable,
    needs_torch,
)

INTERPRETER_ONLY = "(Triton interpreter checks correctness only)"


def test_registered_as_a_builtin_plugin():
    assert evaluator_class("triton") is TritonEvaluator
    assert TritonEvaluator.targets == ("cuda", "cpu-interpret")


@needs_torch
def test_available_where_torch_and_triton_are_installed(monkeypatch):
    assert TritonEvaluator.availability().available
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "triton" else real(name, *a)
    )
    availability = TritonEvaluator.availability()
    assert not availability.available
    assert str(availability).startswith("unavailable: install evoforge[torch]")
    assert "triton" in availability.reason


@pytest.mark.skipif(not NO_GPU, reason="this host has a CUDA GPU: timing is measurable")
def test_without_a_gpu_the_speedups_are_unmeasurable_and_say_why():
    problem = load_problem(SOFTMAX)
    why = f"timing unavailable: {NO_GPU} {INTERPRETER_ONLY}"
    assert TritonEvaluator.unmeasurable(problem) == {
        "speedup_vs_eager": why,
        "speedup_vs_compile": why,
    }
    assert TritonEvaluator.target_for(problem) == "cpu-interpret"


@pytest.mark.skipif(not NO_GPU, reason="this host has a CUDA GPU")
def test_asking_for_cuda_without_a_gpu_is_an_error_not_a_fallback(tmp_path):
    problem = load_problem(make_kernel_problem(tmp_path / "p", options='{"target": "cuda"}'))
    with pytest.raises(ProblemSpecError, match=r"is 'cuda' but this host has none usable"):
        TritonEvaluator.target_for(problem)


def test_the_interpreter_can_be_chosen_on_any_host(tmp_path):
    folder = make_kernel_problem(
        tmp_path / "p",
        objectives='{"speedup_vs_eager": "maximize", "max_abs_error": "minimize"}',
        options='{"target": "cpu-interpret"}',
    )
    problem = load_problem(folder)
    assert TritonEvaluator.target_for(problem) == "cpu-interpret"
    assert TritonEvaluator.unmeasurable(problem) == {
        "speedup_vs_eager": "timing unavailable: options['target'] is 'cpu-interpret' "
        + INTERPRETER_ONLY
    }
    bad = load_problem(make_kernel_problem(tmp_path / "q", options='{"target": "tpu"}'))
    with pytest.raises(ProblemSpecError, match=r"options\['target'\].*'cpu-interpret'"):
        TritonEvaluator.target_for(bad)


def test_the_builtin_problem_declares_a_valid_task():
    problem = load_problem(SOFTMAX)
    assert problem.evaluator == "triton"
    # an error within tolerance is a pass, not something to optimise: no error objective
    assert [o.name for o in problem.objectives] == ["speedup_vs_eager", "speedup_vs_compile"]
    config = read_config(problem)
    assert config["trials"] >= 5
    assert config["task_path"].endswith("triton_softmax/task.py")


@needs_torch
@pytest.mark.skipif(not NO_GPU, reason="on a GPU the seed is timed; see the gpu tests")
def test_seed_is_correct_in_the_interpreter_and_says_timing_is_unavailable(tmp_path):
    (result,) = evaluate_all(measurable(SOFTMAX), [SEED], workers=1)
    assert result.status is Status.OK, result.artifacts
    assert result.objectives == {"passed": 1.0}  # correctness-only on this host
    assert result.metrics["max_abs_error"] < 1e-5
    assert result.metrics["timing"] == f"timing unavailable: no CUDA GPU {INTERPRETER_ONLY}"
    assert "speedup_vs_eager" not in result.metrics
    assert result.device["target"] == "cpu-interpret"
    assert result.device["torch"]  # library versions are part of the fingerprint


@needs_torch
@pytest.mark.slow
def test_triton_softmax_evolves_offline_and_every_program_has_a_verdict(tmp_path):
    db = tmp_path / "runs.db"
    config = RunConfig(problem=str(SOFTMAX), budget=8, workers=2, seed=3)
    run, report = asyncio.run(start_run(config, db))
    assert report.status == "finished"
    with Archive(db) as archive:
        programs = list(archive.programs(run.id))
        start = next(e for e in archive.events(run.id) if e.kind == "run_start")
    evaluated = [p for p in programs if Status(p.status).evaluated]
    assert len(evaluated) == 8
    assert any(p.status == "ok" for p in evaluated)
    for program in evaluated:
        if program.status == "ok":
            assert program.metrics["max_abs_error"] >= 0
            if NO_GPU:  # correctness-only: every correct program scores the same
                assert program.objectives == {"passed": 1.0} and program.score == 1.0
        else:  # a failure always says why
            assert program.artifacts.get("error"), program.status
    if NO_GPU:
        assert start.data["objectives"] == ["passed"]
        assert start.data["correctness_only"] is True
        assert set(start.data["unmeasurable"]) == {"speedup_vs_eager", "speedup_vs_compile"}


# --- on a GPU -------------------------------------------------------------------------------


@gpu
@pytest.mark.gpu
def test_seed_is_timed_against_eager_and_compile():
    (result,) = evaluate_all(load_problem(SOFTMAX), [SEED], workers=1)
    assert result.status is Status.OK, result.artifacts
    metrics = result.metrics
    print(
        f"seed: {metrics['time_ms']:.4f} ms, eager {metrics['reference_time_ms']:.4f} ms, "
        f"speedup vs eager {metrics['speedup_vs_eager']:.3f}, vs compile "
        f"{metrics['speedup_vs_compile']:.3f}, CV {metrics['time_cv']:.3f} on "
        f"{metrics['timed_device']}"
    )
    assert 0.05 < metrics["speedup_vs_eager"] < 10
    assert 0.8 < metrics["reference_vs_itself"] < 1.25
    assert result.device["device_kind"] == "cuda"


@gpu
@pytest.mark.gpu
def test_the_same_kernel_timed_twenty_times_is_stable(tmp_path):
    folder = make_kernel_problem(
        tmp_path / "p",
        task=(SOFTMAX / "task.py").read_text(),
        objectives='{"speedup_vs_eager": "maximize"}',
        options='{"timing_repeats": 30, "sanity_repeats": 10}',
    )
    results = evaluate_all(load_problem(folder), [SEED] * 20, workers=1)
    assert all(r.status is Status.OK for r in results), [r.artifacts for r in results]
    medians = [r.metrics["time_ms"] for r in results]
    cv = statistics.stdev(medians) / statistics.fmean(medians)
    print(f"20 evaluations of the seed: median {statistics.median(medians):.4f} ms, CV {cv:.4f}")
    assert cv < 0.1
