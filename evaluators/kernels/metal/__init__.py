"""The ``metal`` evaluator: Metal Shading Language compute kernels on Apple GPUs (macOS only).

Its runner, one fresh process per candidate: ``python -m evoforge.evaluators.kernels.metal``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.kernels.metal._evaluator import MetalEvaluator as MetalEvaluator

__getattr__, __dir__, __all__ = lazy_package(__name__)
