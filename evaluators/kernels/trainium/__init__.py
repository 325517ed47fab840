"""The ``trainium`` evaluator: NKI kernels on AWS Trainium/Inferentia2 NeuronCores.

Its runner, one fresh process per candidate: ``python -m evoforge.evaluators.kernels.trainium``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.kernels.trainium._evaluator import (
        TrainiumEvaluator as TrainiumEvaluator,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
