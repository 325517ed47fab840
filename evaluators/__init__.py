"""Evaluators: run a candidate in a sandbox and return a typed, honest result.

Each evaluator is a plugin class registered through the ``register_evaluators`` hook, exactly as
a third-party package would register its own, and built on the same public names this package
exports: :class:`Evaluator`, :class:`Availability`, :class:`ResourceRequest`, :func:`run_cascade`
and :func:`classify_metrics`. Subpackages, one concept each:

- the evaluators (one per ``evaluator = "..."`` a problem may declare):

  - :mod:`~evoforge.evaluators.python`: ``python`` (pre-forked fork servers);
  - :mod:`~evoforge.evaluators.kernels`: ``triton`` and ``cuda`` (KernelBench format), ``tpu``,
    ``metal`` and ``trainium``, one subpackage per target;
  - :mod:`~evoforge.evaluators.llvm`: ``llvm`` (evolved policies inside a real LLVM: inlining,
    register-allocation priority, Ext-TSP code layout);
  - :mod:`~evoforge.evaluators.native`: ``native`` (C, C++ and Rust measured by callgrind,
    cachegrind, llvm-mca, qemu-user or wall time);
  - :mod:`~evoforge.evaluators.openevolve`: ``openevolve`` (an OpenEvolve folder's evaluator);
  - :mod:`~evoforge.evaluators.repo`: ``repo`` (a repository's own check and measure commands);

- what they share:

  - :mod:`~evoforge.evaluators.sandbox`: the sandbox every evaluator runs candidates in;
  - :mod:`~evoforge.evaluators.devices`: the host's accelerators, fingerprints, exclusive slots;
  - :mod:`~evoforge.evaluators.timing`: interleaved wall time and callgrind counts on CPUs;
  - :mod:`~evoforge.evaluators.tuning`: knob tuning by optuna (``python`` and ``llvm``);
  - :mod:`~evoforge.evaluators.executors`: evaluations on a Ray cluster (``--executor ray``).

Names are imported on first use (:mod:`evoforge.base.lazy`): loading the built-in plugin (every
``evoforge`` command does) does not import the sandbox or the evaluators themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.archive import EvalResult as EvalResult, Status as Status
    from evoforge.evaluators._base import (
        Availability as Availability,
        Evaluator as Evaluator,
        ResourceRequest as ResourceRequest,
    )
    from evoforge.evaluators._cascade import run_cascade as run_cascade
    from evoforge.evaluators._registry import (
        evaluator_class as evaluator_class,
        evaluator_origins as evaluator_origins,
        evaluators as evaluators,
    )
    from evoforge.evaluators._scoring import (
        classify_metrics as classify_metrics,
        contain_result as contain_result,
    )
    from evoforge.evaluators.devices import (
        Device as Device,
        DeviceBusyError as DeviceBusyError,
        DeviceError as DeviceError,
        DeviceSlots as DeviceSlots,
        Inventory as Inventory,
        cpu_fingerprint as cpu_fingerprint,
        fingerprint as fingerprint,
        inventory as inventory,
    )
    from evoforge.evaluators.kernels import (
        CudaEvaluator as CudaEvaluator,
        EvaluatorUnavailableError as EvaluatorUnavailableError,
        KernelBenchEvaluator as KernelBenchEvaluator,
        MetalEvaluator as MetalEvaluator,
        TpuEvaluator as TpuEvaluator,
        TrainiumEvaluator as TrainiumEvaluator,
        TritonEvaluator as TritonEvaluator,
    )
    from evoforge.evaluators.llvm import LlvmEvaluator as LlvmEvaluator
    from evoforge.evaluators.native import NativeEvaluator as NativeEvaluator
    from evoforge.evaluators.openevolve import OpenEvolveEvaluator as OpenEvolveEvaluator
    from evoforge.evaluators.python import PythonEvaluator as PythonEvaluator
    from evoforge.evaluators.repo import RepoEvaluator as RepoEvaluator
    from evoforge.evaluators.sandbox import (
        Isolation as Isolation,
        Limits as Limits,
        SandboxError as SandboxError,
        SandboxRun as SandboxRun,
        run_sandboxed as run_sandboxed,
    )
    from evoforge.evaluators.timing import (
        CallgrindError as CallgrindError,
        WallComparison as WallComparison,
        callgrind_instructions as callgrind_instructions,
        interleaved_wall as interleaved_wall,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
