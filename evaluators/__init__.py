"""Evaluators: run a candidate in a sandbox and return a typed, honest result.

Each evaluator is a plugin class registered through the ``register_evaluators`` hook, exactly as
a third-party package would register its own. Subpackages, one concept each:

- :mod:`~evoforge.evaluators.sandbox`: the shared sandbox every evaluator runs candidates in;
- :mod:`~evoforge.evaluators.python`: the ``python`` evaluator (pre-forked fork servers);
- :mod:`~evoforge.evaluators.kernels`: ``triton`` and ``cuda`` (KernelBench format), ``tpu``,
  ``metal`` and ``trainium``, one module per target;
- :mod:`~evoforge.evaluators.openevolve`: ``openevolve`` (an OpenEvolve folder's evaluator);
- :mod:`~evoforge.evaluators.repo`: ``repo`` (a repository's own check and measure commands);
- :mod:`~evoforge.evaluators.devices`: the host's accelerators, fingerprints, exclusive slots;
- :mod:`~evoforge.evaluators.timing`: interleaved wall time and callgrind counts on CPUs;
- :mod:`~evoforge.evaluators.executors`: evaluations on a Ray cluster (``--executor ray``).

Names are imported on first use (:mod:`evoforge.base.lazy`): loading the built-in plugin (every
``evoforge`` command does) does not import the sandbox or the evaluators themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_exports

if TYPE_CHECKING:
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
    from evoforge.evaluators.repo import RepoEvaluator
    from evoforge.evaluators.sandbox import (
        Isolation,
        Limits,
        SandboxError,
        SandboxRun,
        run_sandboxed,
    )
    from evoforge.evaluators.timing import (
        CallgrindError,
        WallComparison,
        callgrind_instructions,
        interleaved_wall,
    )

# name -> the module that defines it
_EXPORTS = {
    "EvalResult": "evoforge.archive",
    "Status": "evoforge.archive",
    "Availability": "evoforge.evaluators._base",
    "Evaluator": "evoforge.evaluators._base",
    "ResourceRequest": "evoforge.evaluators._base",
    "run_cascade": "evoforge.evaluators._cascade",
    "evaluator_class": "evoforge.evaluators._registry",
    "evaluator_origins": "evoforge.evaluators._registry",
    "evaluators": "evoforge.evaluators._registry",
    "classify_metrics": "evoforge.evaluators._scoring",
    "contain_result": "evoforge.evaluators._scoring",
    "Device": "evoforge.evaluators.devices",
    "DeviceBusyError": "evoforge.evaluators.devices",
    "DeviceError": "evoforge.evaluators.devices",
    "DeviceSlots": "evoforge.evaluators.devices",
    "Inventory": "evoforge.evaluators.devices",
    "cpu_fingerprint": "evoforge.evaluators.devices",
    "fingerprint": "evoforge.evaluators.devices",
    "inventory": "evoforge.evaluators.devices",
    "CudaEvaluator": "evoforge.evaluators.kernels",
    "EvaluatorUnavailableError": "evoforge.evaluators.kernels",
    "KernelBenchEvaluator": "evoforge.evaluators.kernels",
    "MetalEvaluator": "evoforge.evaluators.kernels",
    "TpuEvaluator": "evoforge.evaluators.kernels",
    "TrainiumEvaluator": "evoforge.evaluators.kernels",
    "TritonEvaluator": "evoforge.evaluators.kernels",
    "LlvmEvaluator": "evoforge.evaluators.llvm",
    "OpenEvolveEvaluator": "evoforge.evaluators.openevolve",
    "PythonEvaluator": "evoforge.evaluators.python",
    "RepoEvaluator": "evoforge.evaluators.repo",
    "Isolation": "evoforge.evaluators.sandbox",
    "Limits": "evoforge.evaluators.sandbox",
    "SandboxError": "evoforge.evaluators.sandbox",
    "SandboxRun": "evoforge.evaluators.sandbox",
    "run_sandboxed": "evoforge.evaluators.sandbox",
    "CallgrindError": "evoforge.evaluators.timing",
    "WallComparison": "evoforge.evaluators.timing",
    "callgrind_instructions": "evoforge.evaluators.timing",
    "interleaved_wall": "evoforge.evaluators.timing",
}

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
    "RepoEvaluator",
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
