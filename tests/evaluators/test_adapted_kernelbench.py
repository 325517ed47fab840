"""KernelBench task files run unmodified: shapes shrunk for the interpreter by the documented
rule, GPU-style tasks and solutions on a CPU, batches with KernelBench's metrics, and (on a GPU)
the kernel suite timed against eager and torch.compile."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap

import pytest

from evoforge.archive import Archive
from evoforge.evaluators import Status, TritonEvaluator
from evoforge.evolve import RunConfig, SeedError, resolve, start_run
from evoforge.evolve.run._batch import run_batch, suite_metrics
from tests.evaluators.kernel_helpers import NO_GPU, evaluate_all, gpu, measurable, needs_torch
from tests.problems.formats import (
    ADD_ON_CUDA,
    ADD_TRITON_SOLUTION,
    RELU,
    SUM_REDUCTION,
    write_level1,
)

pytestmark = needs_torch


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOFORGE_CACHE", str(tmp_path / "cache"))


def _task(tmp_path, text, name="task.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def _load(path):
    from evoforge.evaluators.kernels.kernelbench._harness import load_task

    return load_task(path)


def test_full_kernelbench_shapes_are_shrunk_largest_first_into_the_budget(tmp_path):
    from evoforge.evaluators.kernels.kernelbench._shrink import MAX_ELEMENTS, measure, shrink_task

    relu = _task(tmp_path, RELU, "19_ReLU.py")
    shrunk = shrink_task(relu, _load(relu))  # a 6 GiB input, measured on the meta device
    assert shrunk.sizes == {"batch_size": (4096, 128), "dim": (393216, 96)}
    assert measure(shrunk.module) == (128 * 96, 128 * 96) and 128 * 96 <= MAX_ELEMENTS
    assert "batch_size 4096->128, dim 393216->96" in shrunk.note
    assert "checked on the meta device" in shrunk.note
    summed = _task(tmp_path, SUM_REDUCTION, "47_Sum.py")
    shrunk = shrink_task(summed, _load(summed))
    assert shrunk.sizes == {"batch_size": (128, 16), "dim1": (4096, 32), "dim2": (4095, 31)}
    assert shrunk.module.reduce_dim == 1  # not a size: untouched
    assert shrunk.module.get_init_inputs() == [1]


def test_a_task_that_fits_runs_at_its_own_sizes(tmp_path):
    from evoforge.evaluators.kernels.kernelbench._shrink import shrink_task

    small = _task(
        tmp_path,
        RELU.replace("batch_size = 4096", "batch_size = 4").replace("dim = 393216", "dim = 1000"),
    )
    assert shrink_task(small, _load(small)) is None


def test_a_task_that_cannot_be_measured_asks_for_small_inputs(tmp_path):
    from evoforge.evaluators.kernels.kernelbench._shrink import ShrinkError, shrink_task

    odd = _task(
        tmp_path,
        RELU.replace("x = torch.rand(batch_size, dim)", "x = torch.rand(batch_size, dim).numpy()"),
    )
    with pytest.raises(ShrinkError, match="meta device.*get_inputs_small"):
        shrink_task(odd, _load(odd))


def test_a_gpu_style_task_and_solution_run_unmodified_on_this_host(tmp_path):
    """``.cuda()`` in get_inputs, ``assert x.is_cuda`` and ``device="cuda"`` in the solution,
    no EVOLVE-BLOCK markers: all as written for a GPU."""
    task = _task(tmp_path, ADD_ON_CUDA, "add.py")
    solution = _task(tmp_path, ADD_TRITON_SOLUTION, "solution.py")
    (problem,) = resolve(str(task), target="triton", seed_file=solution).problems
    (result,) = evaluate_all(measurable(problem.spec_path.parent), [problem.seed_source], workers=1)
    assert result.status is Status.OK, result.artifacts
    if NO_GPU:
        assert result.objectives == {"passed": 1.0}
        assert result.metrics["bounds_checked"] > 0  # it ran as a Triton kernel
    wrong = problem.seed_source.replace("x + y, mask=mask", "x - y, mask=mask")
    (bad,) = evaluate_all(measurable(problem.spec_path.parent), [wrong], workers=1)
    assert bad.status is Status.INCORRECT and "differ beyond" in bad.artifacts["error"]


@pytest.mark.skipif(not NO_GPU, reason="on a GPU the task runs at its own shapes")
def test_a_reference_that_fails_on_shrunk_shapes_is_blamed_on_the_task(tmp_path):
    """A check the meta device cannot make (it holds no values) passes the shrink rule and
    fails in the reference's real run."""
    rigid = RELU.replace(
        "return torch.relu(x)", "assert x.sum().item() > 1e5\n        return torch.relu(x)"
    )
    task = _task(tmp_path, rigid, "rigid.py")
    (problem,) = resolve(str(task), target="triton").problems
    config = RunConfig(problem=str(problem.spec_path.parent), budget=2, workers=1)
    with pytest.raises(SeedError) as failure:
        asyncio.run(start_run(config, tmp_path / "r.db"))
    message = str(failure.value)
    assert "the reference of kb_rigid_triton failed" in message
    assert "(the seed was not at fault)" in message
    assert "shrunk for the Triton interpreter" in message and "get_inputs_small" in message
    assert "fix the seed" not in message
    assert "not checked on the meta device" in message  # .item() has no value there


def test_a_size_the_model_insists_on_is_refused_before_anything_runs(tmp_path):
    from evoforge.evaluators.kernels.kernelbench._shrink import ShrinkError, shrink_task

    rigid = RELU.replace(
        "return torch.relu(x)", "assert x.shape[1] == 393216\n        return torch.relu(x)"
    )
    task = _task(tmp_path, rigid, "rigid.py")
    with pytest.raises(ShrinkError) as refused:
        shrink_task(task, _load(task))
    message = str(refused.value)
    assert "dim stays at 393216: 196608 fails on the meta device (AssertionError" in message
    assert "(batch_size=2, dim=393216)" in message  # every other size as low as it goes
    assert "largest input 786432 elements (budget 16384)" in message
    assert "batch_size stays at 2: 1 fails" in message  # one row: a degenerate output
    assert "output 0 dimension 0 would shrink from 4096 to 1" in message
    assert "get_inputs_small(trial)" in message


@pytest.mark.skipif(not NO_GPU, reason="on a GPU the task runs at its own shapes")
def test_a_batch_counts_a_task_whose_reference_never_ran_as_not_run(tmp_path):
    rigid = RELU.replace(
        "return torch.relu(x)", "assert x.shape[1] == 393216\n        return torch.relu(x)"
    )
    task = _task(tmp_path, rigid, "rigid.py")
    (problem,) = resolve(str(task), target="triton").problems

    def settings(problem):
        return {"problem": str(problem.spec_path.parent), "budget": 1, "workers": 1}

    (result,) = asyncio.run(run_batch([problem], settings, tmp_path / "b.db"))
    assert result.status == "failed" and not result.ran and not result.correct
    assert "dim stays at 393216" in result.reason
    metrics = suite_metrics([result])
    assert metrics.not_run == 1 and metrics.tasks == 0


@pytest.mark.slow
@pytest.mark.timeout(1300)  # above the command's own 1200 s limit
@pytest.mark.skipif(not NO_GPU, reason="checks the CPU path; the GPU path has its own test")
def test_three_level1_files_run_unmodified_as_a_batch_from_the_command_line(tmp_path):
    """Acceptance: three KernelBench level-1 files, untouched, with --target triton on CPU."""
    level1 = write_level1(tmp_path / "KernelBench" / "level1")
    before = {p.name: p.read_bytes() for p in level1.iterdir()}
    db = tmp_path / "kb.db"
    env = {**os.environ, "EVOFORGE_CACHE": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-m", "evoforge", "run", str(level1), "--target", "triton",
         "--budget-per-task", "3", "--workers", "2", "--seed", "2", "--db", str(db), "-q"],
        capture_output=True, text=True, env=env, timeout=1200,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert {p.name: p.read_bytes() for p in level1.iterdir()} == before
    out = run.stdout
    assert "Suite metrics (KernelBench's) over 3 tasks: correct 3/3 (fast_0 = 1.000)" in out
    assert "not measured on this host (timing unavailable: no CUDA GPU" in out
    for name in ("kb_19_relu_triton", "kb_23_softmax_triton", "kb_47_sum_reduction"):
        assert name in out
    assert "3 KernelBench tasks for the triton evaluator" in run.stderr
    with Archive(db) as archive:
        runs = archive.runs()
        assert len(runs) == 3
        for info in runs:
            programs = list(archive.programs(info.id))
            evaluated = [p for p in programs if Status(p.status).evaluated]
            assert len(evaluated) == 3
            for program in programs:  # every program has a typed verdict, and a reason
                assert program.status in {s.value for s in Status}
                if program.status != "ok":
                    assert program.artifacts.get("error"), program.status
            seed = programs[0]
            assert seed.status == "ok" and seed.objectives == {"passed": 1.0}
            assert "shrunk for the Triton interpreter" in seed.metrics["inputs"]


# --- on a GPU ---------------------------------------------------------------------------------


@gpu
@pytest.mark.gpu
@pytest.mark.slow
def test_the_kernel_suite_is_timed_against_eager_and_compile_on_a_gpu(tmp_path):
    resolved = resolve("kernel_suite", target="triton")
    db = tmp_path / "suite.db"

    def settings(problem):
        return {"problem": str(problem.spec_path.parent), "budget": 1, "workers": 1}

    results = asyncio.run(run_batch(resolved.problems, settings, db))
    assert len(results) == 9
    for result in results:
        assert result.correct, result.reason
        assert set(result.speedups) == {"eager", "compile"} and result.time_iqr_ms is not None
    metrics = suite_metrics(results)
    assert metrics.fast_0 == 1.0 and set(metrics.geomean) == {"eager", "compile"}
    assert TritonEvaluator.target_for(resolved.problems[0]) == "cuda"
    with Archive(db) as archive:  # torch.profiler's top kernels, for the next prompt
        for info in archive.runs():
            seed = next(iter(archive.programs(info.id)))
            assert seed.artifacts["profile"].startswith("Kernels by self device time over 5")
