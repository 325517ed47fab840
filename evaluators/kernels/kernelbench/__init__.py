"""KernelBench-format kernels: the ``triton`` and ``cuda`` evaluators and their protocol.

A task is a module with ``class Model(nn.Module)``, ``get_inputs()`` and ``get_init_inputs()``;
a candidate defines ``ModelNew``. Per candidate, a fresh runner (``python -m
evoforge.evaluators.kernels.kernelbench``) checks it against the reference on hidden seeds and,
on a CUDA GPU, times it against eager and ``torch.compile`` (see :class:`KernelBenchEvaluator`).
"""

from evoforge.evaluators.kernels.kernelbench._cuda import CudaEvaluator
from evoforge.evaluators.kernels.kernelbench._evaluator import (
    CORRECTNESS_METRICS,
    TIMING_METRICS,
    KernelBenchEvaluator,
    gpu_missing,
    read_config,
    torch_missing,
)
from evoforge.evaluators.kernels.kernelbench._triton import TritonEvaluator

__all__ = [
    "CORRECTNESS_METRICS",
    "TIMING_METRICS",
    "CudaEvaluator",
    "KernelBenchEvaluator",
    "TritonEvaluator",
    "gpu_missing",
    "read_config",
    "torch_missing",
]
