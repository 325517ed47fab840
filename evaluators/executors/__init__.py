"""Executors: where evaluations run.

The local executor is the evaluator itself (sandboxed fork servers on this host, the
default). :class:`RayExecutor` runs each evaluation slot as a Ray actor on a cluster, with
the evaluator's resource request (:class:`~evoforge.evaluators.ResourceRequest`), while the
controller and the archive stay on the head; it re-queues candidates whose worker is lost
(bounded, recorded). Both have an evaluator's interface: ``start``, ``evaluate``, ``close``.

Ray is optional: ``pip install "evoforge[ray]"``; this package imports it only when used.
"""

from evoforge.evaluators.executors._actor import EvaluationActor
from evoforge.evaluators.executors._files import (
    MAX_BYTES,
    ProblemFiles,
    ProblemFilesError,
    materialize,
    problem_files,
)
from evoforge.evaluators.executors._ray import (
    MAX_REQUEUES,
    RAY_INSTALL,
    ExecutorError,
    RayExecutor,
    check_resources,
    connect,
    disconnect,
    import_ray,
    probe,
)

__all__ = [
    # the Ray executor
    "MAX_REQUEUES",
    "RAY_INSTALL",
    "ExecutorError",
    "RayExecutor",
    "check_resources",
    "connect",
    "disconnect",
    "import_ray",
    "probe",
    # what runs on the nodes
    "EvaluationActor",
    # shipping the problem
    "MAX_BYTES",
    "ProblemFiles",
    "ProblemFilesError",
    "materialize",
    "problem_files",
]
