"""Executors: where evaluations run.

The local executor is the evaluator itself (sandboxed fork servers on this host, the
default). :class:`RayExecutor` runs each evaluation slot as a Ray actor on a cluster, with
the evaluator's resource request (:class:`~evoforge.evaluators.ResourceRequest`), while the
controller and the archive stay on the head; it re-queues candidates whose worker is lost
(bounded, recorded). Both have an evaluator's interface: ``start``, ``evaluate``, ``close``.

Ray is optional: ``pip install "evoforge[ray]"``; this package imports it only when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.executors._actor import EvaluationActor as EvaluationActor
    from evoforge.evaluators.executors._files import (
        MAX_BYTES as MAX_BYTES,
        ProblemFiles as ProblemFiles,
        ProblemFilesError as ProblemFilesError,
        materialize as materialize,
        problem_files as problem_files,
    )
    from evoforge.evaluators.executors._ray import (
        MAX_REQUEUES as MAX_REQUEUES,
        RAY_INSTALL as RAY_INSTALL,
        ExecutorError as ExecutorError,
        RayExecutor as RayExecutor,
        check_resources as check_resources,
        connect as connect,
        disconnect as disconnect,
        import_ray as import_ray,
        probe as probe,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
