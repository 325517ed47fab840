"""The ``trainium`` evaluator: NKI kernels on AWS Trainium/Inferentia2 NeuronCores.

Its runner, one fresh process per candidate: ``python -m evoforge.evaluators.kernels.trainium``.
"""

from evoforge.evaluators.kernels.trainium._evaluator import TrainiumEvaluator

__all__ = ["TrainiumEvaluator"]
