"""The ``triton`` evaluator: KernelBench-format Triton kernels, timed on a CUDA GPU.

Without a GPU, candidates run in the Triton interpreter (``TRITON_INTERPRET=1``, set in the
runner before triton is imported) on the task's reduced shapes (``get_inputs_small``), with
bounds checks on every load and store: correctness only. The timing objectives are then
:meth:`~evoforge.evaluators.KernelBenchEvaluator.unmeasurable`, and the run ranks by the first
objective that is measured (for ``triton_softmax``, ``max_abs_error``). See
:mod:`evoforge.evaluators.kernels.kernelbench._evaluator` for the protocol and the options.
"""

from __future__ import annotations

import importlib.util
from importlib import metadata
from typing import ClassVar

from evoforge.evaluators import Availability
from evoforge.evaluators.kernels.kernelbench._evaluator import KernelBenchEvaluator

INTERPRETER_NOTE = "Triton interpreter checks correctness only"


class TritonEvaluator(KernelBenchEvaluator):
    """Triton ``ModelNew`` candidates: timed on a CUDA GPU, interpreted on CPU."""

    name: ClassVar[str] = "triton"
    targets: ClassVar[tuple[str, ...]] = ("cuda", "cpu-interpret")
    kind: ClassVar[str] = "triton"

    @classmethod
    def availability(cls) -> Availability:
        missing = []
        for module in ("torch", "triton", "numpy"):
            if importlib.util.find_spec(module) is None:
                missing.append(module)
                continue
            try:
                metadata.version(module)
            except metadata.PackageNotFoundError:
                missing.append(module)
        if missing:
            return Availability(
                False,
                f"install evoforge[torch] ({', '.join(missing)} not importable); "
                "pip install 'evoforge[torch]'",
            )
        return Availability(True)

    @classmethod
    def unmeasured_why(cls, name: str, why: str) -> str:
        return f"timing unavailable: {why} ({INTERPRETER_NOTE})"
