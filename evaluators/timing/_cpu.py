"""CPU speed of a Python candidate: callgrind instruction counts or interleaved wall time.

A problem opts in with ``options = {"cpu_timing": "callgrind"}`` (or ``"wall"``). After a
candidate of the ``python`` evaluator is ``ok``, :func:`measure` times its entry function and
adds metrics (and the objectives of the same names, where the problem declares them):

- ``"callgrind"``: ``instructions`` executed by ``entry()``: a fresh sandboxed ``python``
  under ``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``) that imports the candidate and
  calls it, minus one that only imports it. Exactly repeatable, about 50x slower than native;
  also ``instructions_total`` and ``instructions_baseline``. The ``profile`` artifact (shown
  in the next prompt) names the candidate's most executed lines
  (:mod:`evoforge.evaluators.timing._lines`).
- ``"wall"``: ``wall_s``, the median seconds of ``entry()`` over ``cpu_timing_repeats``
  (default 10) fresh sandboxed processes, interleaved with the problem's seed program
  (ABAB, ``cpu_timing_warmups`` = 2 discarded); also ``wall_iqr_s``, ``wall_seed_s``,
  ``wall_speedup`` (seed time / candidate time) and ``wall_significant`` (faster by more
  than max(1 %, 3 standard errors)). The clock is read in the child, but it is the one
  captured before the candidate's code runs, and a reported time longer than the sandbox's
  own outside measurement is rejected.

Both run in ``python -m evoforge.evaluators.timing``, a clean process (no secrets in its
environment) that runs each measurement through the shared sandbox, as the same user and
network as the evaluation itself (``sandbox_user``, ``sandbox_network``).
Further options: ``cpu_timing_timeout_s`` (default 50 x ``timeout_s``: callgrind is slow).
The fork server is free again while the timing runs: for ``"wall"``, run with one worker
(``--workers 1``) so other candidates do not share the cores being timed; callgrind counts are
unaffected by load. Not with cascades (``stages``): there ``entry`` takes each stage's
arguments, so the python evaluator times only single-stage problems.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from evoforge.archive import EvalResult, Status
from evoforge.evaluators import classify_metrics
from evoforge.evaluators.devices import fingerprint, inventory
from evoforge.evaluators.sandbox import SandboxOptions, call_runner, server_env
from evoforge.problems import ProblemSpecError

if TYPE_CHECKING:
    from evoforge.problems import Problem

MODES = ("callgrind", "wall")
METRICS = {
    "callgrind": ("instructions", "instructions_total", "instructions_baseline"),
    "wall": ("wall_s", "wall_iqr_s", "wall_seed_s", "wall_speedup", "wall_significant"),
}
"""The metrics each mode adds; a problem may declare any numeric one as an objective."""

_TOTALS = re.compile(rb"^(?:totals|summary):\s*(\d+)", re.MULTILINE)


class CallgrindError(RuntimeError):
    """valgrind is missing, or the measured program failed or overran under it."""

    def __init__(self, message: str, *, overran: bool = False) -> None:
        super().__init__(message)
        self.overran = overran


def valgrind_unavailable() -> str:
    """Why callgrind cannot run here, or "" when it can."""
    if not sys.platform.startswith("linux"):
        return f"callgrind timing needs Linux with valgrind, not {sys.platform}"
    if shutil.which("valgrind") is None:
        return "valgrind is not installed (e.g. `apt-get install valgrind`)"
    return ""


def callgrind_instructions(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    timeout_s: float = 600.0,
) -> int:
    """Instructions executed by ``argv`` under ``valgrind --tool=callgrind`` (its total).

    The count is exactly repeatable for a deterministic program (same binary, arguments,
    environment and working directory). Child processes of ``argv`` are not counted.

    Raises:
        CallgrindError: valgrind is missing, the program exited non-zero or overran
            ``timeout_s`` (its whole process group is killed), or no total was written.
    """
    why = valgrind_unavailable()
    if why:
        raise CallgrindError(why)
    with tempfile.TemporaryDirectory(prefix="evoforge-callgrind-") as out_dir:
        out_file = os.path.join(out_dir, "callgrind.out")
        command = [
            shutil.which("valgrind") or "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out_file}",
            "--quiet",
            *argv,
        ]
        proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # so a timeout kills valgrind and all it started
        )
        try:
            _, stderr = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise CallgrindError(
                f"did not finish within {timeout_s:g} s under callgrind (about 50x slower "
                "than native); raise options['cpu_timing_timeout_s'] or make it faster",
                overran=True,
            ) from None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # anything it left behind
        tail = stderr.decode("utf-8", "replace").strip()[-2000:]
        if proc.returncode != 0:
            raise CallgrindError(f"exited with code {proc.returncode} under callgrind: {tail}")
        try:
            with open(out_file, "rb") as f:
                match = _TOTALS.search(f.read())
        except OSError:
            match = None
        if match is None:
            raise CallgrindError(f"callgrind wrote no instruction total; valgrind said: {tail}")
        return int(match.group(1))


def timing_mode(problem: Problem) -> str | None:
    """The problem's ``cpu_timing`` option, validated."""
    mode = problem.options.get("cpu_timing")
    if mode is not None and mode not in MODES:
        raise ProblemSpecError(
            problem.spec_path,
            "options['cpu_timing']",
            f"found {mode!r}; use {' or '.join(repr(m) for m in MODES)}, or None for no timing",
        )
    return mode


def unmeasurable(problem: Problem) -> dict[str, str]:
    """Timing objectives of ``problem`` this host cannot measure, each with why."""
    mode = timing_mode(problem)
    if mode != "callgrind":
        return {}
    why = valgrind_unavailable()
    declared = {o.name for o in problem.objectives}
    return {name: why for name in METRICS["callgrind"] if why and name in declared}


async def measure(problem: Problem, source: str, result: EvalResult) -> EvalResult:
    """Add CPU timing metrics to an ``ok`` result when the problem asks for them.

    Returns ``result`` unchanged when the problem has no ``cpu_timing`` option. Declared
    objectives named like timing metrics are checked only after they are measured, so this
    re-derives the verdict from ``result.metrics`` (the python evaluator reports them as
    missing). A measurement that fails makes the result fail with the measurement's status
    when a timing metric is a declared objective; otherwise the result stays ``ok`` and an
    artifact says why there is no timing.
    """
    mode = timing_mode(problem)
    if mode is None:
        return result
    timed = set(METRICS[mode])
    declared = {o.name for o in problem.objectives} | {d.name for d in problem.descriptors}
    untimed = replace(
        problem,
        objectives=tuple(o for o in problem.objectives if o.name not in timed),
        descriptors=tuple(d for d in problem.descriptors if d.name not in timed),
    )
    if result.status not in (Status.OK, Status.INCORRECT) or not result.metrics:
        return result
    status, error, objectives, descriptors = classify_metrics(untimed, result.metrics)
    artifacts = {k: v for k, v in result.artifacts.items() if k != "error"}
    if status is not Status.OK:
        return replace(result, status=status, artifacts={**artifacts, "error": error})
    start = time.perf_counter()
    reply = await _run_measurement(problem, source, mode)
    timings = {**result.timings, "cpu_timing_s": time.perf_counter() - start}
    device = fingerprint(inventory().of_kind("cpu")[0])
    device["cpu_timing"] = mode
    if reply.get("valgrind"):
        device["valgrind"] = str(reply["valgrind"])
    if reply.get("status") != Status.OK.value:
        why = f"cpu timing ({mode}) failed: {reply.get('error') or 'no reason given'}"
        artifacts["cpu_timing_error"] = why
        if timed & declared:
            failed = Status(reply.get("status", Status.RUNTIME_ERROR.value))
            return replace(
                result,
                status=failed,
                objectives={},
                descriptors={},
                artifacts={**artifacts, "error": why},
                timings=timings,
                device=device,
            )
        return replace(result, artifacts=artifacts, timings=timings, device=device)
    if reply.get("profile"):
        artifacts["profile"] = str(reply["profile"])
    metrics = {**result.metrics, **reply["metrics"]}
    status, error, objectives, descriptors = classify_metrics(problem, metrics)
    if error:
        artifacts["error"] = error
    return EvalResult(status, metrics, objectives, descriptors, artifacts, timings, device)


async def _run_measurement(problem: Problem, source: str, mode: str) -> dict[str, Any]:
    """Run ``python -m evoforge.evaluators.timing`` on one candidate; its JSON reply."""
    sandbox = SandboxOptions.of(problem)
    user, network = sandbox.sandbox_user, sandbox.sandbox_network
    options = problem.options
    timeout_s = float(options.get("cpu_timing_timeout_s", 50 * problem.timeout_s))
    repeats = int(options.get("cpu_timing_repeats", 10))
    warmups = int(options.get("cpu_timing_warmups", 2))
    request: dict[str, Any] = {
        "mode": mode,
        "source": source,
        "seed_source": problem.seed_source,
        "entry": problem.entry,
        "preload": list(problem.preload),
        "timeout_s": timeout_s if mode == "callgrind" else problem.timeout_s,
        "memory_mb": problem.memory_mb,
        "user": user,
        "allow_root": sandbox.sandbox_allow_root,
        "network": network,
        "repeats": repeats,
        "warmups": warmups,
    }
    runs = 2 if mode == "callgrind" else 2 * (repeats + warmups)
    deadline_s = runs * request["timeout_s"] + 60.0
    return await call_runner(
        "evoforge.evaluators.timing",
        request,
        deadline_s=deadline_s,
        env=server_env(sandbox.sandbox_env),
    )
