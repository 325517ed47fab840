"""The ``cuda`` evaluator: KernelBench ``ModelNew`` modules that build CUDA C++ inline.

Candidates call ``torch.utils.cpp_extension.load_inline`` (or ``load``); a build that fails is
``compile_error`` with the compiler's output as the ``compiler_output`` artifact. On a CUDA GPU with
a CUDA build of torch, candidates are built, run and timed exactly like Triton ones (see
:mod:`evoforge.evaluators.kernels.kernelbench._evaluator`). Without one, but with ``nvcc``, each
build is compile-only (:mod:`evoforge.evaluators.kernels.kernelbench._build`: ``nvcc -c`` for the
CUDA sources, ``c++ -fsyntax-only`` for the C++ ones, nothing linked or run): the result is ``ok``
with no objectives and says "compiled; not run: no CUDA GPU", and every objective this evaluator
measures is :meth:`unmeasurable`, so a run refuses to start rather than rank by nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from evoforge.evaluators import Availability
from evoforge.evaluators.kernels.kernelbench._build import NOT_RUN, find_nvcc
from evoforge.evaluators.kernels.kernelbench._evaluator import (
    CORRECTNESS_METRICS,
    TIMING_METRICS,
    KernelBenchEvaluator,
    torch_missing,
)

if TYPE_CHECKING:
    from evoforge.problems import Problem


class CudaEvaluator(KernelBenchEvaluator):
    """CUDA C++ ``ModelNew`` candidates: built, run and timed on a GPU; compiled without."""

    name: ClassVar[str] = "cuda"
    targets: ClassVar[tuple[str, ...]] = ("cuda", "compile-only")
    kind: ClassVar[str] = "cuda"

    @classmethod
    def availability(cls) -> Availability:
        if why := torch_missing():
            return Availability(False, f"{why}; pip install 'evoforge[torch]'")
        if find_nvcc() is None:
            return Availability(
                False,
                "nvcc not found (not on PATH, no $CUDA_HOME/bin/nvcc): install the CUDA "
                "toolkit or set CUDA_HOME so CUDA sources can be compiled",
            )
        return Availability(True)

    @classmethod
    def correctness_only(cls, problem: Problem) -> str:
        """Nothing runs without a GPU (compile-only): not even correctness can be checked."""
        return ""

    @classmethod
    def unmeasured(cls, declared: set[str]) -> list[str]:
        return [n for n in (*TIMING_METRICS, *CORRECTNESS_METRICS) if n in declared]

    @classmethod
    def unmeasured_why(cls, name: str, why: str) -> str:
        return f"{NOT_RUN}" if why.startswith("no CUDA GPU") else f"not run: {why}"
