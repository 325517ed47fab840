"""Built-in plugin: the evaluators that ship with evoforge."""

from evaluators._cuda import CudaEvaluator
from evaluators._metal import MetalEvaluator
from evaluators._python import PythonEvaluator
from evaluators._tpu import TpuEvaluator
from evaluators._trainium import TrainiumEvaluator
from evaluators._triton import TritonEvaluator
from plugins import hookimpl


@hookimpl
def register_evaluators(register):
    register(PythonEvaluator)
    register(TpuEvaluator)
    register(MetalEvaluator)
    register(TrainiumEvaluator)
    register(TritonEvaluator)
    register(CudaEvaluator)
