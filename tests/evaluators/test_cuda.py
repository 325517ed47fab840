"""The ``cuda`` evaluator: KernelBench ``ModelNew`` modules that build CUDA C++ with
``load_inline``. Compile errors come back with the compiler's output; without a GPU the
sources are compiled (nvcc) but not run, and the result says so."""

from __future__ import annotations

import dataclasses

import pytest

from evoforge.evaluators import CudaEvaluator, Status, evaluator_class
from evoforge.evaluators.kernels.kernelbench._build import find_nvcc
from evoforge.evolve import ConfigError, measurable_problem
from evoforge.problems import load_problem
from tests.evaluators.kernel_helpers import (
    NO_GPU,
    SOFTMAX,
    dedent,
    evaluate_all,
    gpu,
    make_kernel_problem,
    needs_torch,
)

_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed here")


def needs_nvcc(test):
    """Skips a test that compiles CUDA where nvcc or the kernel extras are missing."""
    return needs_torch(_nvcc(test))


NOT_RUN = "compiled; not run: no CUDA GPU"

# A plain CUDA kernel without the torch headers: compiles in a second or two.
PLAIN = '''
    import torch
    import torch.nn as nn
    from torch.utils.cpp_extension import load_inline

    ext = load_inline(
        name="plain_scale",
        cpp_sources="void scale(float* x, int n);",
        cuda_sources=r"""
    __global__ void scale_kernel(float* x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= 2.0f;
    }
    void scale(float* x, int n) { scale_kernel<<<(n + 255) / 256, 256>>>(x, n); }
    """,
        no_implicit_headers=True,
    )

    class ModelNew(nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=-1)
'''
BROKEN = PLAIN.replace("x[i] *= 2.0f;", "x[i] *= 2.0f  // the semicolon is missing")

# KernelBench style: the torch headers, a pybind11 module, a real softmax kernel.
SOFTMAX_CUDA = '''
    import torch
    import torch.nn as nn
    from torch.utils.cpp_extension import load_inline

    source = r"""
    __global__ void softmax_kernel(const float* x, float* out, int cols) {
        const float* in_row = x + (long)blockIdx.x * cols;
        float* out_row = out + (long)blockIdx.x * cols;
        __shared__ float shared[256];
        float m = -INFINITY;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, in_row[c]);
        shared[threadIdx.x] = m;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s)
                shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + s]);
            __syncthreads();
        }
        m = shared[0];
        __syncthreads();
        float sum = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(in_row[c] - m);
        shared[threadIdx.x] = sum;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
            __syncthreads();
        }
        sum = shared[0];
        for (int c = threadIdx.x; c < cols; c += blockDim.x) out_row[c] = expf(in_row[c] - m) / sum;
    }

    torch::Tensor softmax_cuda(torch::Tensor x) {
        auto out = torch::empty_like(x);
        softmax_kernel<<<x.size(0), 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), x.size(1));
        return out;
    }
    """

    softmax = load_inline(
        name="softmax_ext",
        cpp_sources="torch::Tensor softmax_cuda(torch::Tensor x);",
        cuda_sources=source,
        functions=["softmax_cuda"],
    )

    class ModelNew(nn.Module):
        def forward(self, x):
            return softmax.softmax_cuda(x.contiguous())
'''


@pytest.fixture
def cuda_problem(tmp_path):
    def make(timeout_s: float = 120, objectives: str = '{"max_abs_error": "minimize"}'):
        folder = make_kernel_problem(
            tmp_path / "p", evaluator="cuda", timeout_s=timeout_s, objectives=objectives
        )
        return load_problem(folder)

    return make


def test_registered_as_a_builtin_plugin():
    assert evaluator_class("cuda") is CudaEvaluator
    assert CudaEvaluator.targets == ("cuda", "compile-only")


def test_unavailable_without_nvcc_says_so(monkeypatch):
    # torch is checked first; pretend it is there so that this runs without the kernel extras
    monkeypatch.setattr("evoforge.evaluators.kernels.kernelbench._cuda.torch_missing", lambda: "")
    monkeypatch.setattr("evoforge.evaluators.kernels.kernelbench._cuda.find_nvcc", lambda: None)
    availability = CudaEvaluator.availability()
    assert not availability.available
    assert "nvcc not found" in availability.reason
    assert "CUDA_HOME" in availability.reason


def test_nvcc_is_found_through_cuda_home(monkeypatch, tmp_path):
    nvcc = tmp_path / "bin" / "nvcc"
    nvcc.parent.mkdir()
    nvcc.write_text("#!/bin/sh\n")
    nvcc.chmod(0o755)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert find_nvcc() == str(nvcc)


@pytest.mark.skipif(not NO_GPU, reason="this host has a CUDA GPU: kernels run")
def test_without_a_gpu_nothing_is_measurable_and_a_run_refuses_to_start():
    problem = dataclasses.replace(load_problem(SOFTMAX), evaluator="cuda")
    assert CudaEvaluator.unmeasurable(problem) == {
        "speedup_vs_eager": NOT_RUN,
        "speedup_vs_compile": NOT_RUN,
    }
    with pytest.raises(ConfigError, match="can measure none"):
        measurable_problem(problem, CudaEvaluator)


@needs_nvcc
@pytest.mark.skipif(not NO_GPU, reason="this host has a CUDA GPU: kernels run")
def test_compiles_without_a_gpu_and_reports_compile_errors(cuda_problem):
    ok, broken = evaluate_all(cuda_problem(), [dedent(PLAIN), dedent(BROKEN)], cls=CudaEvaluator)
    assert ok.status is Status.OK, ok.artifacts
    assert ok.objectives == {}  # nothing ran: nothing to rank by
    assert ok.metrics["verdict"] == NOT_RUN
    assert ok.metrics["ran"] is False
    assert ok.metrics["builds"][0]["files"] == ["cuda.cu", "main.cpp"]
    assert ok.artifacts["note"] == NOT_RUN
    assert ok.device["target"] == "compile-only"
    assert broken.status is Status.COMPILE_ERROR
    assert "does not compile" in broken.artifacts["error"]
    assert 'error: expected a ";"' in broken.artifacts["compiler_output"]


BUILD_TIMEOUT_S = 900
"""The evaluator's limit for a candidate that compiles against the torch headers: nvcc and
``c++ -fsyntax-only`` each parse them (the whole test: 21 s of CPU and 36 s of wall time on
two cores shared with a benchmark; past 300 s on two cores shared by five test runs)."""
TEST_TIMEOUT_S = BUILD_TIMEOUT_S + 120
"""pytest's limit for such a test: above the evaluator's own, so that a slow build ends in
the evaluator's typed ``timeout`` verdict rather than pytest killing the test (the global
300 s was below the 600 s the evaluator was given)."""


@needs_nvcc
@pytest.mark.slow
@pytest.mark.timeout(TEST_TIMEOUT_S)
@pytest.mark.skipif(not NO_GPU, reason="this host has a CUDA GPU: see the gpu test")
def test_a_kernelbench_candidate_with_torch_headers_compiles(cuda_problem):
    problem = cuda_problem(timeout_s=BUILD_TIMEOUT_S)
    (result,) = evaluate_all(problem, [dedent(SOFTMAX_CUDA)], cls=CudaEvaluator)
    assert result.status is Status.OK, result.artifacts
    assert result.metrics["verdict"] == NOT_RUN
    assert result.metrics["builds"][0]["name"] == "softmax_ext"


@gpu
@pytest.mark.gpu
@needs_nvcc
@pytest.mark.timeout(TEST_TIMEOUT_S)
def test_on_a_gpu_the_kernel_is_built_run_and_timed(cuda_problem):
    problem = cuda_problem(
        timeout_s=BUILD_TIMEOUT_S,
        objectives='{"speedup_vs_eager": "maximize", "max_abs_error": "minimize"}',
    )
    good, broken = evaluate_all(
        problem, [dedent(SOFTMAX_CUDA), dedent(BROKEN)], cls=CudaEvaluator, workers=1
    )
    assert good.status is Status.OK, good.artifacts
    assert good.objectives["max_abs_error"] < 1e-4
    print(f"CUDA softmax: speedup vs eager {good.metrics['speedup_vs_eager']:.3f}")
    assert broken.status is Status.COMPILE_ERROR
    assert broken.artifacts["compiler_output"]
