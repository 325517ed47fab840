"""Kernel evaluators, one module per target.

- ``triton`` and ``cuda``: KernelBench-format tasks
(:mod:`~evoforge.evaluators.kernels.kernelbench`);
- ``tpu``: JAX/Pallas kernels (interpret mode on CPU);
- ``metal``: Metal Shading Language kernels on Apple GPUs;
- ``trainium``: NKI kernels on AWS NeuronCores.

Each checks correctness against a reference computed outside the candidate's process before it
times anything, in a fresh trusted runner per candidate (``python -m
evoforge.evaluators.kernels.<target>``).
"""

from evoforge.evaluators.kernels._io import DEFAULT_TOLERANCE
from evoforge.evaluators.kernels._runner_evaluator import (
    EvaluatorUnavailableError,
    KernelEvaluator,
    on_device,
)
from evoforge.evaluators.kernels.kernelbench import (
    CudaEvaluator,
    KernelBenchEvaluator,
    TritonEvaluator,
)
from evoforge.evaluators.kernels.metal import MetalEvaluator
from evoforge.evaluators.kernels.tpu import TpuEvaluator
from evoforge.evaluators.kernels.trainium import TrainiumEvaluator

__all__ = [
    # the evaluators
    "CudaEvaluator",
    "MetalEvaluator",
    "TpuEvaluator",
    "TrainiumEvaluator",
    "TritonEvaluator",
    # shared by them
    "DEFAULT_TOLERANCE",
    "EvaluatorUnavailableError",
    "KernelBenchEvaluator",
    "KernelEvaluator",
    "on_device",
]
