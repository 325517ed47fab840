"""KernelBench-format kernels: the ``triton`` and ``cuda`` evaluators and their protocol.

A task is a module with ``class Model(nn.Module)``, ``get_inputs()`` and ``get_init_inputs()``;
a candidate defines ``ModelNew``. Per candidate, a fresh runner (``python -m
evoforge.evaluators.kernels.kernelbench``) checks it against the reference on hidden seeds and,
on a CUDA GPU, times it against eager and ``torch.compile`` (see :class:`KernelBenchEvaluator`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.kernels.kernelbench._cuda import CudaEvaluator as CudaEvaluator
    from evoforge.evaluators.kernels.kernelbench._evaluator import (
        CORRECTNESS_METRICS as CORRECTNESS_METRICS,
        TIMING_METRICS as TIMING_METRICS,
        KernelBenchEvaluator as KernelBenchEvaluator,
        gpu_missing as gpu_missing,
        read_config as read_config,
        torch_missing as torch_missing,
    )
    from evoforge.evaluators.kernels.kernelbench._triton import TritonEvaluator as TritonEvaluator

__getattr__, __dir__, __all__ = lazy_package(__name__)
