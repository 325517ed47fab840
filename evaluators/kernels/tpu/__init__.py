"""The ``tpu`` evaluator: JAX/Pallas kernels, timed on a TPU, checked in interpret mode on CPU.

Its runner, one fresh process per candidate: ``python -m evoforge.evaluators.kernels.tpu``.
"""

from evoforge.evaluators.kernels.tpu._evaluator import TpuEvaluator

__all__ = ["TpuEvaluator"]
