"""One-shot trusted runner processes, for evaluators that need a fresh interpreter per job.

The evaluator starts ``python -m evoforge.evaluators.<runner>`` (:func:`call_runner`; for
example ``evoforge.evaluators.kernels.tpu``), writes one JSON request to its stdin and reads one
JSON reply line from its stdout. The runner sets itself up like a fork server (:func:`prepare`:
one thread per BLAS, network namespace, subreaper, non-dumpable, the candidates' user) and runs
candidates through the shared sandbox (:func:`~evoforge.evaluators.sandbox.run_sandboxed`);
whatever it computes after a candidate exited (a reference output, a comparison) never lived in
a candidate's process.

Used by the CPU timing option (:mod:`evoforge.evaluators.timing`), the kernel evaluators
(:mod:`evoforge.evaluators.kernels`: ``tpu``, ``metal``, ``trainium``, ``triton``, ``cuda``),
``native``, ``openevolve`` and ``repo``; the ``llvm`` evaluator's runners use :func:`prepare`
and the frames but stay up between stages (:mod:`evoforge.evaluators.llvm`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import signal
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evoforge.archive import EvalResult, Status
from evoforge.evaluators import classify_metrics
from evoforge.evaluators.sandbox._host import enter_network_namespace, harden_server
from evoforge.evaluators.sandbox._options import THREAD_VARIABLES, candidate_user
from evoforge.evaluators.sandbox._types import Isolation

if TYPE_CHECKING:
    from evoforge.problems import Problem

_REPLY_FD: int | None = None


def prepare(
    user: str | int | None, network: str, *, allow_root: bool = False
) -> tuple[Isolation, dict[str, str]]:
    """Set this runner up to fork sandboxed candidates; returns their isolation and notes.

    Call first thing: the reply channel moves to a private descriptor (fd 1 becomes a copy
    of stderr, so nothing the job prints can corrupt the reply).
    """
    global _REPLY_FD
    for name in THREAD_VARIABLES:  # before numpy (or jax) can start a thread pool
        os.environ[name] = "1"
    _REPLY_FD = os.dup(1)
    os.dup2(2, 1)
    notes = {"network": network}
    if network == "server":
        notes["network"] = "runner namespace" if enter_network_namespace() else "host"
    harden_server()
    uid_gid, notes["user"], reach = candidate_user(
        "" if user is None else str(user), allow_root=allow_root
    )
    isolation = Isolation(user=uid_gid, new_network=network == "candidate", reach=reach)
    return isolation, notes


def prepare_request(request: Mapping[str, Any]) -> tuple[Isolation, dict[str, str]]:
    """:func:`prepare` with the settings every evaluator sends in its request: ``user``,
    ``network`` (``server`` when absent), ``allow_root`` (False when absent) and ``disk_mb``
    (the problem's disk quota; :data:`~evoforge.evaluators.sandbox._types.DEFAULT_DISK_MB`
    when absent)."""
    isolation, notes = prepare(
        request.get("user"),
        request.get("network", "server"),
        allow_root=bool(request.get("allow_root")),
    )
    if request.get("disk_mb") is not None:
        isolation = dataclasses.replace(isolation, disk_mb=int(request["disk_mb"]))
    return isolation, notes


def own_python_first() -> None:
    """Put this interpreter's folder first on ``PATH``, for the commands a runner's jobs start:
    ``python`` there (a repository's ``check``, an OpenEvolve evaluator's subprocess) is the
    interpreter evoforge runs on, whose environment holds the problem's dependencies,
    activated or not; the minimal root holds no other Python a ``PATH`` could lead to (pyenv's
    shims under ``/root``, say)."""
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.path.dirname(sys.executable) + (os.pathsep + path if path else "")


class RunnerFailure(Exception):  # noqa: N818 - a verdict about the candidate, not a bug
    """A candidate's evaluation ended early with ``status``; the runner replies with it."""

    def __init__(self, status: str, error: str) -> None:
        super().__init__(error)
        self.status, self.error = status, error

    def reply(self) -> dict[str, Any]:
        return {"status": self.status, "error": self.error}


def read_request() -> dict[str, Any]:
    return json.loads(sys.stdin.buffer.read())


def reply(message: dict[str, Any]) -> None:
    """Write the one reply line (to the private descriptor once :func:`prepare` ran)."""
    data = (json.dumps(message) + "\n").encode()
    fd = _REPLY_FD if _REPLY_FD is not None else 1
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def call_runner(
    module: str, request: dict[str, Any], *, deadline_s: float, env: dict[str, str]
) -> dict[str, Any]:
    """Run ``python -m module`` on ``request``; its reply, or a ``status``/``error`` reply
    saying how it failed (timeout, crash). Raises only on cancellation (after killing it)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        start_new_session=True,  # its own group: killed whole, and SIGINT at the terminal is ours
    )
    try:
        out, err = await asyncio.wait_for(
            proc.communicate(json.dumps(request).encode()), deadline_s
        )
    except BaseException as exc:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        if not isinstance(exc, TimeoutError):
            raise
        return {
            "status": Status.TIMEOUT.value,
            "error": f"the {module} process did not finish within {deadline_s:g} s; killed",
        }
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # leftovers of its group
    try:
        answer = json.loads(out.decode().strip().splitlines()[-1])
        if not isinstance(answer, dict):
            raise ValueError(answer)
    except (ValueError, IndexError, UnicodeDecodeError):
        tail = err.decode("utf-8", "replace").strip()[-1500:]
        return {
            "status": Status.CRASHED.value,
            "error": f"the {module} process exited with {proc.returncode} without a reply: "
            f"{tail or 'no stderr'}",
        }
    return answer


def reply_result(
    problem: Problem,
    reply: Mapping[str, Any],
    caller_s: float,
    device: dict[str, str],
    *,
    classify: bool = True,
) -> EvalResult:
    """The typed result of a runner's reply: status, metrics checked against ``problem``'s
    objectives and descriptors (when ``classify`` and the run was ok), artifacts, timings and
    the ``device`` fingerprint. A reply with an unknown status is ``crashed``."""
    try:
        status = Status(str(reply.get("status")))
    except ValueError:
        status = Status.CRASHED
    artifacts = {str(k): str(v) for k, v in (reply.get("artifacts") or {}).items()}
    if reply.get("error"):
        artifacts["error"] = str(reply["error"])
    timings = {str(k): float(v) for k, v in (reply.get("timings") or {}).items()}
    timings["caller_s"] = caller_s
    metrics = dict(reply.get("metrics") or {})
    objectives: dict[str, float] = {}
    descriptors: dict[str, float] = {}
    if status is Status.OK and classify:
        status, error, objectives, descriptors = classify_metrics(problem, metrics)
        if error:
            artifacts["error"] = error
    return EvalResult(status, metrics, objectives, descriptors, artifacts, timings, device)
