"""Kernel evaluators, one module per target.

- ``triton`` and ``cuda``: KernelBench-format tasks
(:mod:`~evoforge.evaluators.kernels.kernelbench`);
- ``tpu``: JAX/Pallas kernels (interpret mode on CPU);
- ``metal``: Metal Shading Language kernels on Apple GPUs;
- ``trainium``: NKI kernels on AWS NeuronCores.

Each checks correctness against a reference computed outside the candidate's process before it
times anything, in a fresh trusted runner per candidate (``python -m
evoforge.evaluators.kernels.<target>``). The targets share :class:`KernelEvaluator` (the
evaluator's side of such a runner) and the kernel declarations of a spec (inputs, reference,
tolerances: :func:`read_kernel_config`, :func:`make_inputs`, :func:`compare_arrays`, ...).

Names are imported on first use (:mod:`evoforge.base.lazy`), so a target's runner imports
only what it runs, not the other targets' evaluators.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.kernels._io import (
        DEFAULT_TOLERANCE as DEFAULT_TOLERANCE,
        compare_arrays as compare_arrays,
        digest as digest,
        make_inputs as make_inputs,
        numpy_reference as numpy_reference,
        read_kernel_config as read_kernel_config,
    )
    from evoforge.evaluators.kernels._runner_evaluator import (
        EvaluatorUnavailableError as EvaluatorUnavailableError,
        KernelEvaluator as KernelEvaluator,
        on_device as on_device,
    )
    from evoforge.evaluators.kernels.kernelbench import (
        CudaEvaluator as CudaEvaluator,
        KernelBenchEvaluator as KernelBenchEvaluator,
        TritonEvaluator as TritonEvaluator,
    )
    from evoforge.evaluators.kernels.metal import MetalEvaluator as MetalEvaluator
    from evoforge.evaluators.kernels.tpu import TpuEvaluator as TpuEvaluator
    from evoforge.evaluators.kernels.trainium import TrainiumEvaluator as TrainiumEvaluator

__getattr__, __dir__, __all__ = lazy_package(__name__)
