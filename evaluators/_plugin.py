"""Built-in plugin: the evaluators that ship with evoforge.

The evaluator classes are imported when the hook runs (when something asks which evaluators
exist), not when the plugin loads: every ``evoforge`` command loads the plugins.
"""

from evoforge.plugins import hookimpl


@hookimpl
def register_evaluators(register):
    from evoforge.evaluators.kernels import (
        CudaEvaluator,
        MetalEvaluator,
        TpuEvaluator,
        TrainiumEvaluator,
        TritonEvaluator,
    )
    from evoforge.evaluators.llvm import LlvmEvaluator
    from evoforge.evaluators.native import NativeEvaluator
    from evoforge.evaluators.openevolve import OpenEvolveEvaluator
    from evoforge.evaluators.python import PythonEvaluator
    from evoforge.evaluators.repo import RepoEvaluator

    register(PythonEvaluator)
    register(TpuEvaluator)
    register(MetalEvaluator)
    register(TrainiumEvaluator)
    register(TritonEvaluator)
    register(CudaEvaluator)
    register(LlvmEvaluator)
    register(NativeEvaluator)
    register(OpenEvolveEvaluator)
    register(RepoEvaluator)
