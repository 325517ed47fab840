"""Evaluators: run a candidate in a sandbox and return a typed, honest result.

Each evaluator is a plugin class registered through the ``register_evaluators`` hook, exactly as
a third-party package would register its own.
"""

from evaluators._base import Availability, Evaluator
from evaluators._cascade import run_cascade
from evaluators._cpu_timing import CallgrindError, callgrind_instructions
from evaluators._cuda import CudaEvaluator
from evaluators._device import cpu_fingerprint
from evaluators._devices import (
    Device,
    DeviceBusyError,
    DeviceError,
    DeviceSlots,
    Inventory,
    fingerprint,
    inventory,
)
from evaluators._kernel_evaluator import EvaluatorUnavailableError
from evaluators._kernelbench import KernelBenchEvaluator
from evaluators._metal import MetalEvaluator
from evaluators._python import PythonEvaluator
from evaluators._result import EvalResult, Status
from evaluators._sandbox import Isolation, Limits, SandboxError, SandboxRun, run_sandboxed
from evaluators._scoring import classify_metrics
from evaluators._timing import WallComparison, interleaved_wall
from evaluators._tpu import TpuEvaluator
from evaluators._trainium import TrainiumEvaluator
from evaluators._triton import TritonEvaluator

__all__ = [
    # interface
    "Availability",
    "Evaluator",
    # built-in evaluators
    "CudaEvaluator",
    "KernelBenchEvaluator",
    "MetalEvaluator",
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
]
