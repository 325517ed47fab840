"""The ``trainium`` evaluator: NKI kernels on AWS Trainium/Inferentia2 NeuronCores.

A problem for it uses the kernel declarations
(:func:`~evoforge.evaluators.kernels.read_kernel_config`: ``inputs``, ``reference`` in numpy) with
``evaluator = "trainium"`` and ``entry`` = the candidate's NKI kernel function (written with
``neuronxcc.nki`` and ``nki.language``; the harness applies the decorators). The protocol is
AccelOpt's:

- correctness: ``trials`` (>= 5) fresh hidden-seed inputs through ``nki.baremetal``, each
  output within a relative L2 error of ``options["rel_l2"]`` (default 2e-5) of the float64
  reference: ``||out - ref|| / ||ref||``;
- timing: ``nki.benchmark(warmup=2, iters=10)`` (neuron-bench on one NeuronCore), the
  candidate and the problem's seed kernel alternating for ``timing_rounds`` (3) rounds, each
  in a fresh sandboxed process; a round is measured again (up to twice) while the two kernels'
  p50 latencies spread by more than 1 % across rounds. Metrics ``kernel_us`` (median p50),
  ``seed_us``, ``speedup`` (seed / candidate), ``speedup_significant``, ``latency_spread``.

Runner: ``python -m evoforge.evaluators.kernels.trainium``; every candidate run happens in the
shared sandbox, the reference and the comparison in the runner afterwards.

Availability needs the real Neuron compiler (``neuronx-cc`` with ``neuronxcc.nki``, from
Neuron's own package index: the PyPI ``neuronx-cc`` and ``nki`` are placeholder wheels) and a
``/dev/neuron*`` device. Not testable here: only :meth:`TrainiumEvaluator.availability` runs,
and says which is missing.
"""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING, Any, ClassVar

from evoforge.evaluators import Availability, ResourceRequest
from evoforge.evaluators.devices import inventory, neuron_toolchain
from evoforge.evaluators.kernels import KernelEvaluator

if TYPE_CHECKING:
    from evoforge.problems import Problem

REL_L2 = 2e-5
"""AccelOpt's correctness bound: relative L2 error in float64."""


class TrainiumEvaluator(KernelEvaluator):
    """Evaluates NKI kernels (see the module docstring for the problem format)."""

    name: ClassVar[str] = "trainium"
    targets: ClassVar[tuple[str, ...]] = ("neuron",)
    runner: ClassVar[str] = "evoforge.evaluators.kernels.trainium"

    @classmethod
    def default_resources(cls) -> ResourceRequest:
        """One NeuronCore per evaluation on a Ray node (Ray's Neuron hosts advertise
        ``neuron_cores``)."""
        return ResourceRequest(resources={"neuron_cores": 1.0})

    def __init__(self, problem: Problem, *, workers: int = 1) -> None:
        super().__init__(problem, workers=workers)
        if inventory().of_kind("neuron"):
            self.use_device("neuron")  # neuron-bench times one NeuronCore: one at a time

    @classmethod
    def availability(cls) -> Availability:
        reasons = []
        if not neuron_toolchain():
            try:
                metadata.version("neuronx-cc")
                reasons.append(
                    "Neuron SDK not installed (the PyPI 'neuronx-cc' is a placeholder wheel; "
                    "install it from Neuron's package index)"
                )
            except metadata.PackageNotFoundError:
                reasons.append(
                    "Neuron SDK not installed (neuronx-cc comes from Neuron's own package "
                    "index, not PyPI)"
                )
        if not inventory().of_kind("neuron"):
            reasons.append(inventory().why_none("neuron"))
        return Availability(not reasons, "; ".join(reasons))

    def request(self, source: str) -> dict[str, Any]:
        options = self.problem.options
        return {
            "rel_l2": float(options.get("rel_l2", REL_L2)),
            "warmups": int(options.get("timing_warmups", 2)),
            "repeats": int(options.get("timing_repeats", 10)),
            "rounds": int(options.get("timing_rounds", 3)),
        }
