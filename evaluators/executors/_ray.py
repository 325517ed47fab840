"""Evaluations on a Ray cluster: ``--executor ray [--ray-address ADDR]``.

The controller and the SQLite archive stay on the head (the host that runs ``evoforge``);
each of ``workers`` evaluation slots is a Ray actor (:class:`~evoforge.evaluators.executors.
_actor.EvaluationActor`) created with the evaluator's resource request
(:meth:`~evoforge.evaluators.Evaluator.resources`: one CPU by default, ``num_gpus=1`` for
kernel timing, ``TPU`` or ``neuron_cores`` for TPU and Neuron hosts, or the problem's
``options["ray_resources"]``), so Ray places it on a node that has them. Candidates go to
whichever slot is free; only a candidate's source and its result travel (the problem folder
goes to the object store once).

**Lost workers.** When the node or worker process running an evaluation dies (the node is
shut down or lost, the process is killed), the candidate is evaluated again on another slot,
at most :data:`MAX_REQUEUES` times; the slot is replaced in the background (where the cluster
has room). Each re-queue is recorded with the result (``artifacts["requeued"]``; the
controller also stores an ``eval_requeued`` event). A candidate whose evaluations keep killing
their worker (one that kills its own process tree, say) is recorded as ``crashed`` after its
re-queues, not retried forever. Only one result per candidate ever comes back.

Ray is an optional dependency (``pip install "evoforge[ray]"``), imported only here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evoforge.archive import EvalResult, Status
from evoforge.base.settings import ConfigError
from evoforge.evaluators.executors._actor import EvaluationActor
from evoforge.evaluators.executors._files import ProblemFilesError, problem_files

if TYPE_CHECKING:
    from evoforge.evaluators import Availability, Evaluator, ResourceRequest
    from evoforge.problems import Problem

log = logging.getLogger("evoforge")

MAX_REQUEUES = 2
"""Times a candidate is evaluated again after its worker was lost (3 tries in all)."""
RAY_INSTALL = 'pip install "evoforge[ray]"'
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
_CONNECTED_BY_US = False  # whether this process's Ray connection is ours to close


class ExecutorError(ConfigError):
    """The Ray executor cannot run here: Ray missing, the cluster unreachable, or no node
    with the resources an evaluation asks for. The message says which and the fix."""


def import_ray(address: str | None = None) -> Any:
    """Import Ray, or raise :class:`ExecutorError` saying how to install it.

    A cluster on this host's loopback (``127.0.0.1:PORT``, or a local one started here) must
    be joined over loopback too: Ray rewrites a loopback address to the host's network
    address unless told that clusters are off this host's network.
    """
    loopback = address is None or address.rsplit(":", 1)[0] in _LOOPBACK
    if loopback:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report to the network
    try:
        import ray
    except ImportError:
        raise ExecutorError(
            f"executor 'ray' needs Ray, which is not installed here: {RAY_INSTALL} (on this "
            "host and on every node of the cluster)"
        ) from None
    if loopback:
        with contextlib.suppress(Exception):  # imported earlier, before the variable was set
            from ray._private import ray_constants

            ray_constants.ENABLE_RAY_CLUSTER = False
    return ray


def connect(address: str | None) -> Any:
    """Join the cluster at ``address`` (None: start a one-host cluster on 127.0.0.1).

    Raises:
        ExecutorError: Ray is missing or the cluster cannot be reached.
    """
    global _CONNECTED_BY_US
    ray = import_ray(address)
    if ray.is_initialized():
        return ray
    try:
        if address is None:
            ray.init(
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                _node_ip_address="127.0.0.1",
            )
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except Exception as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise ExecutorError(
            f"cannot connect to {where}: {type(exc).__name__}: {str(exc)[:300]}; start it "
            "with `ray start --head` (and `ray start --address HEAD:6379` on each node), "
            "then pass --ray-address HEAD:6379"
        ) from None
    _CONNECTED_BY_US = True
    return ray


def disconnect() -> None:
    """Leave the cluster if this module joined it (a host program's own Ray is left alone)."""
    global _CONNECTED_BY_US
    if _CONNECTED_BY_US:
        import ray

        ray.shutdown()
        _CONNECTED_BY_US = False


def check_resources(ray: Any, name: str, request: ResourceRequest) -> None:
    """Refuse a request no node of the cluster can ever grant (it would wait forever).

    Raises:
        ExecutorError: naming what is asked, what the cluster has, and the fix.
    """
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    wanted = {"CPU": request.num_cpus, "GPU": request.num_gpus, **request.resources}
    wanted = {k: v for k, v in wanted.items() if v > 0}
    for node in nodes:
        have = node.get("Resources", {})
        if all(have.get(k, 0.0) >= v for k, v in wanted.items()):
            return
    offered = sorted(
        {k for n in nodes for k in n.get("Resources", {}) if not k.startswith("node:")}
    )
    raise ExecutorError(
        f"evaluator {name!r} asks each evaluation for "
        f"{', '.join(f'{k}={v:g}' for k, v in wanted.items())}, but no node of the Ray "
        f"cluster has that ({len(nodes)} node(s); resources: {', '.join(offered) or 'none'}); "
        "add such a node, or set options = {'ray_resources': {...}} in the problem"
    )


def probe(
    cls: type[Evaluator], problem: Problem, address: str | None
) -> tuple[Availability, dict[str, str]]:
    """Whether ``cls`` can run on a node of the cluster, and what it cannot measure there.

    Runs a small Ray task with the evaluator's resource request, so the answer comes from
    the kind of node that will evaluate (a GPU node for a kernel evaluator), not the head.
    """
    ray = connect(address)
    request = cls.resources(problem)
    check_resources(ray, cls.name, request)

    def ask(evaluator: type[Evaluator], spec: Problem) -> tuple[Availability, dict[str, str]]:
        return evaluator.availability(), evaluator.unmeasurable(spec)

    task = ray.remote(ask).options(**_options(request), max_retries=1)
    return ray.get(task.remote(cls, problem))


@dataclass
class _Slot:
    handle: Any
    where: Mapping[str, Any]


class RayExecutor:
    """Evaluates candidates on Ray actors; the interface of an
    :class:`~evoforge.evaluators.Evaluator` (``start``, ``evaluate``, ``close``).

    Args:
        cls: the problem's evaluator class (the built-in ones, or a plugin's installed on
            every node).
        problem: the problem as the head ranks it.
        workers: evaluation slots (actors) across the cluster.
        address: the cluster (``HOST:6379`` or ``ray://HOST:10001``); None starts a local one.
        start_timeout_s: how long the first slot may take to be placed and started.
    """

    def __init__(
        self,
        cls: type[Evaluator],
        problem: Problem,
        *,
        workers: int = 1,
        address: str | None = None,
        start_timeout_s: float = 600.0,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.cls, self.problem, self.workers, self.address = cls, problem, workers, address
        self.start_timeout_s = start_timeout_s
        self.requeued = 0  # re-queues so far (all candidates)
        self._ray: Any = None
        self._files_ref: Any = None
        self._actor_class: Any = None
        self._idle: asyncio.Queue[_Slot | None] = asyncio.Queue()
        self._slots: list[_Slot] = []
        self._background: set[asyncio.Task[Any]] = set()
        self._failure = ""
        self._state = "new"

    async def start(self) -> None:
        """Join the cluster, ship the problem, create the slots; returns when one is ready.

        Raises:
            ExecutorError: Ray missing, cluster unreachable, resources nowhere, or no slot
                ready within ``start_timeout_s``.
        """
        if self._state != "new":
            raise RuntimeError(f"start() was already called (the executor is {self._state})")
        self._state = "started"
        ray = self._ray = connect(self.address)
        request = self.cls.resources(self.problem)
        check_resources(ray, self.cls.name, request)
        try:
            self._files_ref = ray.put(problem_files(self.problem))
        except ProblemFilesError as exc:
            raise ExecutorError(str(exc)) from None
        self._actor_class = ray.remote(EvaluationActor).options(
            **_options(request), max_concurrency=1, max_restarts=0, max_task_retries=0
        )
        for _ in range(self.workers):
            self._add_slot()
        started = time.monotonic()
        while self._idle.empty():
            if self._failure:
                raise ExecutorError(self._failure)
            if time.monotonic() - started > self.start_timeout_s:
                raise ExecutorError(
                    f"no evaluation slot was ready on the Ray cluster within "
                    f"{self.start_timeout_s:g} s (are the nodes busy, or short of the "
                    "resources an evaluation asks for?)"
                )
            await asyncio.sleep(0.05)

    async def evaluate(self, source: str) -> EvalResult:
        """Evaluate ``source`` on a free slot; re-queued when its worker is lost.

        Raises:
            RuntimeError: called before ``start()`` or after ``close()``.
            ExecutorError: every slot was lost and none could be replaced.
        """
        if self._state != "started":
            raise RuntimeError("call `await executor.start()` (or `async with`) first")
        ray = self._ray
        lost: list[str] = []
        for _ in range(MAX_REQUEUES + 1):
            slot = await self._idle.get()
            if slot is None:
                self._idle.put_nowait(None)
                raise ExecutorError(self._failure)
            try:
                result: EvalResult = await slot.handle.evaluate.remote(source)
            except _lost_errors(ray) as exc:
                lost.append(
                    f"{type(exc).__name__} on node {slot.where.get('ip', '?')} "
                    f"({str(exc).splitlines()[0][:200] if str(exc) else 'no details'})"
                )
                self._replace(slot)
                continue
            except ray.exceptions.RayTaskError as exc:  # the evaluator raised: as if local
                self._idle.put_nowait(slot)
                raise exc.as_instanceof_cause() from None
            except BaseException:
                self._replace(slot)  # cancelled mid-call: its state is unknown
                raise
            self._idle.put_nowait(slot)
            if lost:
                result.artifacts["requeued"] = _requeue_note(lost)
            return result
        return EvalResult(
            Status.CRASHED,
            artifacts={
                "error": (
                    f"the Ray worker evaluating this candidate was lost {len(lost)} times; "
                    "it is not tried again (a candidate that kills its own worker ends so)"
                ),
                "requeued": _requeue_note(lost),
            },
        )

    async def close(self) -> None:
        """Stop every slot (its evaluator and sandboxes) and leave the cluster. Safe twice."""
        if self._state == "closed":
            return
        self._state = "closed"
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        ray = self._ray
        if ray is not None:
            closing = [slot.handle.close.remote() for slot in self._slots]
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.gather(*closing, return_exceptions=True), 10)
            for slot in self._slots:
                with contextlib.suppress(Exception):
                    ray.kill(slot.handle, no_restart=True)
        self._idle.put_nowait(None)
        disconnect()

    async def __aenter__(self) -> RayExecutor:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -----------------------------------------------------------------------------------------

    def _add_slot(self) -> None:
        handle = self._actor_class.remote(self.cls, self.problem, self._files_ref)
        task = asyncio.get_running_loop().create_task(self._ready(handle))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _ready(self, handle: Any) -> None:
        ray = self._ray
        try:
            where = await handle.ready.remote()
        except _lost_errors(ray) as exc:  # its node went away before it was ready: again
            log.warning("a Ray evaluation slot was lost while starting (%s); replacing it", exc)
            self._add_slot()
            return
        except Exception as exc:
            # A RayTaskError's text is the remote traceback; its cause is the error itself.
            remote = isinstance(exc, ray.exceptions.RayTaskError)
            cause = getattr(exc, "cause", None) if remote else exc
            if not isinstance(cause, BaseException):
                cause = exc
            self._failure = (
                f"an evaluation slot could not start its evaluator on the Ray cluster: "
                f"{type(cause).__name__}: {str(cause)[-500:]}"
            )
            self._idle.put_nowait(None)
            return
        slot = _Slot(handle, where)
        self._slots.append(slot)
        self._idle.put_nowait(slot)

    def _replace(self, slot: _Slot) -> None:
        """Drop a lost slot and start another where the cluster has room."""
        self.requeued += 1
        with contextlib.suppress(ValueError):
            self._slots.remove(slot)
        with contextlib.suppress(Exception):
            self._ray.kill(slot.handle, no_restart=True)
        if self._state == "started":
            self._add_slot()


def _options(request: ResourceRequest) -> dict[str, Any]:
    options: dict[str, Any] = {"num_cpus": request.num_cpus, "num_gpus": request.num_gpus}
    if request.resources:
        options["resources"] = dict(request.resources)
    return options


def _lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Ray's ways of saying the worker or node running a call is gone."""
    names = (
        "RayActorError",  # ActorDiedError, ActorUnavailableError
        "WorkerCrashedError",
        "NodeDiedError",
        "ObjectLostError",
        "OwnerDiedError",
        "LocalRayletDiedError",
    )
    return tuple(getattr(ray.exceptions, n) for n in names if hasattr(ray.exceptions, n))


def _requeue_note(lost: list[str]) -> str:
    return f"re-queued {len(lost)} time(s) after losing its Ray worker: " + "; ".join(lost)
