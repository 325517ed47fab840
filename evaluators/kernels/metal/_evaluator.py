"""The ``metal`` evaluator: Metal Shading Language compute kernels on Apple GPUs (macOS only).

A problem for it uses the kernel declarations
(:func:`~evoforge.evaluators.kernels.read_kernel_config`: ``inputs``, ``reference`` in numpy,
``atol``/``rtol``) with ``evaluator = "metal"``, ``entry`` = the kernel function's name, and an MSL
seed (``seed_file = "seed.metal"``, EVOLVE-BLOCK markers in ``//`` comments). Calling convention:
inputs in buffers ``0..k-1`` (``device const T*``), outputs in buffers ``k..k+m-1`` (``device T*``,
shaped like the reference's outputs), the element count of the first output at buffer ``k+m``
(``constant uint&``); one thread per element of the first output.

Per candidate, ``python -m evoforge.evaluators.kernels.metal`` compiles the source
(``newLibraryWithSource:options:error:``: a failure is ``compile_error`` with the compiler's
message), runs ``trials`` (>= 5) fresh hidden-seed inputs, and compares with the float64
reference. Output buffers carry canaries past their end and inputs are checked unchanged,
so an out-of-bounds write or an input overwrite is ``incorrect``. Timing: the candidate and the
problem's seed kernel alternate (ABAB, ``timing_warmups`` = 3, ``timing_repeats`` = 20) and
each dispatch is timed by its command buffer's ``GPUStartTime``/``GPUEndTime``: metrics
``kernel_us``, ``kernel_iqr_us``, ``seed_us``, ``speedup`` (seed / candidate) and
``speedup_significant`` (above max(1 %, 3 standard errors)). A published Metal result claimed
2.8x for a kernel that was 3.2 % slower: the interleaving and the significance rule exist to
prevent exactly that.

The runner does not fork (the Objective-C runtime is not fork-safe) and runs no candidate
Python: the candidate is MSL, compiled and run by Metal. The runner process is its unit of
containment: its own process group, killed whole at the deadline.

Not testable on Linux: only :meth:`MetalEvaluator.availability` runs there, and says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from evoforge.evaluators import Availability, ResourceRequest
from evoforge.evaluators.devices import inventory
from evoforge.evaluators.kernels import KernelEvaluator

if TYPE_CHECKING:
    from evoforge.problems import Problem


class MetalEvaluator(KernelEvaluator):
    """Evaluates MSL compute kernels (see the module docstring for the problem format)."""

    name: ClassVar[str] = "metal"
    targets: ClassVar[tuple[str, ...]] = ("metal",)
    runner: ClassVar[str] = "evoforge.evaluators.kernels.metal"

    @classmethod
    def default_resources(cls) -> ResourceRequest:
        """A Metal GPU per evaluation: start macOS Ray nodes with ``--resources '{"metal": 1}'``."""
        return ResourceRequest(resources={"metal": 1.0})

    def __init__(self, problem: Problem, *, workers: int = 1) -> None:
        super().__init__(problem, workers=workers)
        if inventory().of_kind("metal"):
            self.use_device("metal")

    @classmethod
    def availability(cls) -> Availability:
        why = inventory().why_none("metal")  # not macOS / no pyobjc Metal / no device
        return Availability(not why, why)

    def request(self, source: str) -> dict[str, Any]:
        options = self.problem.options
        return {
            "warmups": int(options.get("timing_warmups", 3)),
            "repeats": int(options.get("timing_repeats", 20)),
        }
