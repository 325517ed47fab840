"""The ``tpu`` evaluator: JAX/Pallas kernels, timed on a TPU, checked in interpret mode on CPU.

Its runner, one fresh process per candidate: ``python -m evoforge.evaluators.kernels.tpu``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.kernels.tpu._evaluator import TpuEvaluator as TpuEvaluator

__getattr__, __dir__, __all__ = lazy_package(__name__)
