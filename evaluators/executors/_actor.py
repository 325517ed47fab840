"""The node side of the Ray executor: one actor holds one evaluator, one evaluation at a time.

:class:`EvaluationActor` runs in a Ray worker process on whichever node has the resources the
evaluator asked for. It writes the shipped problem folder to a temporary folder there, starts
the evaluator (``workers=1``: its own sandboxes, fork servers included, as on a single host)
on the first call, and evaluates candidates one by one. Results carry the node they ran on
(``device["ray_node"]``, ``device["ray_node_ip"]``).

This module does not import Ray: the executor wraps the class with ``ray.remote`` on the head,
and Ray imports this module by name on the nodes (evoforge must be installed there).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from typing import TYPE_CHECKING, Any

from evoforge.evaluators.executors._files import ProblemFiles, materialize

if TYPE_CHECKING:
    from evoforge.archive import EvalResult
    from evoforge.evaluators import Evaluator
    from evoforge.problems import Problem


class EvaluationActor:
    """One evaluation slot on a Ray node (see the module docstring)."""

    def __init__(self, cls: type[Evaluator], problem: Problem, files: ProblemFiles) -> None:
        self.problem = materialize(files, problem)
        self.folder = self.problem.spec_path.parents[len(files.spec.split("/"))]
        self.evaluator = cls(self.problem, workers=1)
        self.started = False
        self.where = _where()

    async def ready(self) -> dict[str, Any]:
        """Start the evaluator (imports, fork servers); where this slot runs."""
        if not self.started:
            await self.evaluator.start()
            self.started = True
        return self.where

    async def evaluate(self, source: str) -> EvalResult:
        """Evaluate one candidate (the evaluator never raises for a bad candidate)."""
        await self.ready()
        result = await self.evaluator.evaluate(source)
        result.device.update(ray_node=str(self.where["node"]), ray_node_ip=str(self.where["ip"]))
        return result

    async def close(self) -> None:
        """Stop the evaluator and remove the problem's copy."""
        with contextlib.suppress(Exception):
            await self.evaluator.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _where() -> dict[str, Any]:
    """This process's node id and address (Ray's runtime context), and its pid."""
    node, ip = "?", "?"
    with contextlib.suppress(Exception):
        import ray

        context = ray.get_runtime_context()
        node = context.get_node_id()
        ip = ray.util.get_node_ip_address()
    return {"node": node, "ip": ip, "pid": os.getpid()}
