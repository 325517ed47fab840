"""Evaluators: run a candidate in a sandbox and return a typed, honest result.

Each evaluator is a plugin class registered through the ``register_evaluators`` hook, exactly as
a third-party package would register its own. Subpackages, one concept each:

- :mod:`~evoforge.evaluators.sandbox`: the shared sandbox every evaluator runs candidates in;
- :mod:`~evoforge.evaluators.python`: the ``python`` evaluator (pre-forked fork servers);
- :mod:`~evoforge.evaluators.kernels`: ``triton`` and ``cuda`` (KernelBench format), ``tpu``,
  ``metal`` and ``trainium``, one module per target;
- :mod:`~evoforge.evaluators.openevolve`: ``openevolve`` (an OpenEvolve folder's evaluator);
- :mod:`~evoforge.evaluators.devices`: the host's accelerators, fingerprints, exclusive slots;
- :mod:`~evoforge.evaluators.timing`: interleaved wall time and callgrind counts on CPUs;
- :mod:`~evoforge.evaluators.executors`: evaluations on a Ray cluster (``--executor ray``).
"""

from evoforge.archive import EvalResult, Status
from evoforge.evaluators._base import Availability, Evaluator, ResourceRequest
from evoforge.evaluators._cascade import run_cascade
from evoforge.evaluators._registry import evaluator_class, evaluator_origins, evaluators
from evoforge.evaluators._scoring import classify_metrics, contain_result
from evoforge.evaluators.devices import (
    Device,
    DeviceBusyError,
    DeviceError,
    DeviceSlots,
    Inventory,
    cpu_fingerprint,
    fingerprint,
    inventory,
)
from evoforge.evaluators.kernels import (
    CudaEvaluator,
    EvaluatorUnavailableError,
    KernelBenchEvaluator,
    MetalEvaluator,
    TpuEvaluator,
    TrainiumEvaluator,
    TritonEvaluator,
)
from evoforge.evaluators.llvm import LlvmEvaluator
from evoforge.evaluators.openevolve import OpenEvolveEvaluator
from evoforge.evaluators.python import PythonEvaluator
from evoforge.evaluators.sandbox import Isolation, Limits, SandboxError, SandboxRun, run_sandboxed
from evoforge.evaluators.timing import (
    CallgrindError,
    WallComparison,
    callgrind_instructions,
    interleaved_wall,
)

__all__ = [
    # interface
    "Availability",
    "Evaluator",
    "ResourceRequest",
    # registered evaluators
    "evaluator_class",
    "evaluator_origins",
    "evaluators",
    # built-in evaluators
    "CudaEvaluator",
    "KernelBenchEvaluator",
    "LlvmEvaluator",
    "MetalEvaluator",
    "OpenEvolveEvaluator",
    "PythonEvaluator",
    "SandboxError",
    "TpuEvaluator",
    "TrainiumEvaluator",
    "TritonEvaluator",
    "EvaluatorUnavailableError",
    # the shared sandbox and cascade, for evaluator plugins
    "Isolation",
    "Limits",
    "SandboxRun",
    "run_sandboxed",
    "run_cascade",
    # devices
    "cpu_fingerprint",
    "Device",
    "DeviceBusyError",
    "DeviceError",
    "DeviceSlots",
    "Inventory",
    "fingerprint",
    "inventory",
    # timing
    "CallgrindError",
    "WallComparison",
    "callgrind_instructions",
    "interleaved_wall",
    # results
    "EvalResult",
    "Status",
    "classify_metrics",
    "contain_result",
]
