"""The ``metal`` evaluator: Metal Shading Language compute kernels on Apple GPUs (macOS only).

Its runner, one fresh process per candidate: ``python -m evoforge.evaluators.kernels.metal``.
"""

from evoforge.evaluators.kernels.metal._evaluator import MetalEvaluator

__all__ = ["MetalEvaluator"]
