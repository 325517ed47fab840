"""Built-in plugin: the evaluators that ship with evoforge."""

from evoforge.evaluators.kernels import (
    CudaEvaluator,
    MetalEvaluator,
    TpuEvaluator,
    TrainiumEvaluator,
    TritonEvaluator,
)
from evoforge.evaluators.llvm import LlvmEvaluator
from evoforge.evaluators.openevolve import OpenEvolveEvaluator
from evoforge.evaluators.python import PythonEvaluator
from evoforge.plugins import hookimpl


@hookimpl
def register_evaluators(register):
    register(PythonEvaluator)
    register(TpuEvaluator)
    register(MetalEvaluator)
    register(TrainiumEvaluator)
    register(TritonEvaluator)
    register(CudaEvaluator)
    register(LlvmEvaluator)
    register(OpenEvolveEvaluator)
