"""The ``tpu`` evaluator: JAX/Pallas kernels, timed on a TPU, checked in interpret mode on CPU.

A problem for it declares, besides the usual fields (``evaluator = "tpu"``)::

    entry = "softmax"                     # the candidate's kernel function
    inputs = [                            # cases: the arguments of one call, (shape, dtype)
        [((300, 200), "float32", 30.0)],  # or (shape, dtype, scale): normal(0, scale)
        [((8, 1000), "float32")],         # at least one dimension must not be a power of two
    ]
    atol = 1e-4                           # optional; default by dtype (float32 1e-4, ...)
    rtol = 1e-4

    def reference(*args):                 # plain jax.numpy; import jax inside the function
        import jax
        return jax.nn.softmax(args[0], axis=-1)

    def evaluate(metrics):                # gets this evaluator's metrics; returns the ones to
        return metrics                    # record (add derived values or descriptors here)

The candidate defines ``entry`` with ``pl.pallas_call(..., interpret=INTERPRET)``; the harness
sets the global ``INTERPRET`` (True without a TPU).

Per candidate, a fresh runner process (:mod:`evoforge.evaluators.kernels.tpu`) draws hidden seeds,
makes ``trials`` (>= 5) inputs cycling through the cases, and runs the candidate once in the shared
sandbox. After it exited, the runner computes the reference on its own untouched copy of the inputs
(in float64 by default) and compares. Rejected: a wrong shape or dtype, an error beyond ``atol +
rtol * |ref|``, NaN where the reference has none, a kernel that changed its inputs, and an entry
that never calls ``pl.pallas_call``.

Metrics: ``max_abs_error``, ``error_ratio`` (largest error over its tolerance; <= 1 passes),
``pallas_calls``, ``trials``; on a real TPU also ``kernel_us``, ``kernel_iqr_us``,
``reference_us``, ``speedup`` (reference / kernel, medians of interleaved runs with
``block_until_ready``) and ``speedup_significant``. Without a TPU those timing objectives are
:meth:`~TpuEvaluator.unmeasurable`: interpret mode checks correctness only.

Options: ``trials`` (5), ``timing_warmups`` (3), ``timing_repeats`` (20),
``reference_precision`` (``"float64"`` or ``"input"``), ``tpu_target`` (``"auto"``, or
``"cpu-interpret"`` to skip the TPU), ``sandbox_user`` (``"nobody"``) and
``sandbox_network`` (``"server"``; ``"host"`` on a TPU, whose runtime reads the VM's metadata
server).
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any, ClassVar

from evoforge.evaluators import Availability, ResourceRequest
from evoforge.evaluators.devices import inventory
from evoforge.evaluators.kernels import KernelEvaluator
from evoforge.problems import ProblemSpecError

if TYPE_CHECKING:
    from evoforge.problems import Problem

TIMING_METRICS = ("speedup", "kernel_us", "kernel_iqr_us", "reference_us")
NO_TPU = "no TPU: Pallas interpret mode checks correctness only"


class TpuEvaluator(KernelEvaluator):
    """Evaluates Pallas kernels (see the module docstring for the problem format)."""

    name: ClassVar[str] = "tpu"
    targets: ClassVar[tuple[str, ...]] = ("tpu", "cpu-interpret")
    runner: ClassVar[str] = "evoforge.evaluators.kernels.tpu"

    @classmethod
    def default_resources(cls) -> ResourceRequest:
        """One TPU chip per evaluation on a Ray node (Ray's TPU hosts advertise ``TPU``)."""
        return ResourceRequest(resources={"TPU": 1.0})

    def __init__(self, problem: Problem, *, workers: int = 1) -> None:
        super().__init__(problem, workers=workers)
        self.target = _target(problem)
        if self.target == "tpu":
            # libtpu gives one process every chip of the host: one candidate at a time.
            self.use_device("tpu")

    @classmethod
    def availability(cls) -> Availability:
        missing = [m for m in ("jax", "jaxlib") if importlib.util.find_spec(m) is None]
        if missing:
            return Availability(
                False,
                f"{' and '.join(missing)} not installed (pip install 'jax[cpu]' for interpret "
                "mode, 'jax[tpu]' on a TPU VM)",
            )
        return Availability(True)

    @classmethod
    def unmeasurable(cls, problem: Problem) -> dict[str, str]:
        if _target(problem) == "tpu":
            return {}
        why = NO_TPU
        if problem.options.get("tpu_target") == "cpu-interpret" and inventory().of_kind("tpu"):
            why = "tpu_target is 'cpu-interpret': Pallas interpret mode checks correctness only"
        declared = {o.name for o in problem.objectives}
        return {name: why for name in TIMING_METRICS if name in declared}

    @classmethod
    def correctness_only(cls, problem: Problem) -> str:
        """Without a TPU, Pallas interpret mode runs the kernel: correctness only."""
        return "" if _target(problem) == "tpu" else NO_TPU

    def request(self, source: str) -> dict[str, Any]:
        options, on_tpu = self.problem.options, self.target == "tpu"
        return {
            "interpret": not on_tpu,
            "time": on_tpu,
            "warmups": int(options.get("timing_warmups", 3)),
            "repeats": int(options.get("timing_repeats", 20)),
            # libtpu asks the VM's metadata server about its topology: keep the network there.
            "network": options.get("sandbox_network", "host" if on_tpu else "server"),
        }


def _target(problem: Problem) -> str:
    wanted = problem.options.get("tpu_target", "auto")
    if wanted not in ("auto", "cpu-interpret"):
        raise ProblemSpecError(
            problem.spec_path,
            "options['tpu_target']",
            f"found {wanted!r}; use 'auto' or 'cpu-interpret'",
        )
    return "tpu" if wanted == "auto" and inventory().of_kind("tpu") else "cpu-interpret"
