"""The ``example-script`` evaluator: run the candidate as a script, score what it prints.

Each evaluation runs ``python -I candidate.py [ARGS]`` through evoforge's shared sandbox
(:func:`evoforge.evaluators.run_sandboxed`: own session and process group, fresh
working directory, CPU/memory/file-size limits, wall-clock timeout that kills the group, its own
network namespace where the host allows one). The sandboxed child replaces itself with a fresh
interpreter, so the candidate shares no memory with the engine. What the script prints to stdout is
the output; the problem's ``evaluate(output)`` scores it here, in the engine's process, outside the
candidate's.

Cascades work as for every evaluator: each stage's ``args`` become the script's command-line
arguments, its ``timeout_s``/``memory_mb`` its limits, its ``evaluate`` function its scorer.

Limits of this example: candidates run as the engine's user (no user switch), and scoring
functions run in the engine's process, so they must be trusted and quick. Runs from several
threads at once are fine: outside a subreaper sandbox server, ``run_sandboxed`` kills only the
candidate's own process group, never the engine's other children.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from evoforge.evaluators import (
    Availability,
    EvalResult,
    Evaluator,
    Isolation,
    Limits,
    SandboxRun,
    Status,
    classify_metrics,
    cpu_fingerprint,
    run_cascade,
    run_sandboxed,
)
from evoforge.evaluators.sandbox import RESULT_FD
from evoforge.problems import import_spec

if TYPE_CHECKING:
    from evoforge.problems import Problem, Stage

_TAIL = 4000
# Runs in the fresh interpreter: the candidate with stdout captured, then the sandbox's result
# frame (a JSON header line, then the output) on the result descriptor.
_RUNNER = f"""
import io, json, os, runpy, sys, traceback
sys.argv = sys.argv[1:]
out = sys.stdout = io.StringIO()
header = {{"status": "ok"}}
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as exc:
    if exc.code not in (None, 0):
        header = {{"status": "runtime_error", "error": f"exited with status {{exc.code!r}}"}}
except SyntaxError as exc:
    error = f"SyntaxError: {{exc.msg}} (line {{exc.lineno}})"
    header = {{"status": "syntax_error", "error": error}}
except MemoryError:
    header = {{"status": "memory_limit", "error": "ran out of memory (MemoryError)"}}
except BaseException as exc:
    header = {{
        "status": "runtime_error",
        "error": f"{{type(exc).__name__}}: {{exc}}"[:{_TAIL}],
        "traceback": traceback.format_exc()[-{_TAIL}:],
    }}
data = json.dumps(header).encode() + b"\\n"
if header["status"] == "ok":
    data += out.getvalue().encode("utf-8", "replace")
view = memoryview(data)
while view:
    view = view[os.write({RESULT_FD}, view):]
"""


class ScriptEvaluator(Evaluator):
    """Runs each candidate as a Python script in the shared sandbox; scores its stdout."""

    name: ClassVar[str] = "example-script"
    targets: ClassVar[tuple[str, ...]] = ("cpu",)

    def __init__(self, problem: Problem, *, workers: int = 1) -> None:
        super().__init__(problem, workers=workers)
        self._spec = import_spec(problem.spec_path)  # the scoring functions, trusted

    @classmethod
    def availability(cls) -> Availability:
        if not hasattr(os, "fork"):
            return Availability(False, "needs os.fork (Linux or macOS)")
        if not hasattr(os, "pidfd_open"):
            # The sandbox is driven from a worker thread, where its SIGCHLD fallback cannot
            # be armed (signal wake-up descriptors belong to the main thread).
            return Availability(False, "needs os.pidfd_open (Linux 5.3 or later)")
        return Availability(True)

    async def evaluate(self, source: str) -> EvalResult:
        if self.problem.stages:
            return await run_cascade(
                self.problem.stages, lambda stage: self._run(source, stage), problem=self.problem
            )
        result = await self._run(source, None)
        if result.status is Status.OK:
            status, error, objectives, descriptors = classify_metrics(self.problem, result.metrics)
            result.status, result.objectives, result.descriptors = status, objectives, descriptors
            if error:
                result.artifacts["error"] = error
        return result

    async def _run(self, source: str, stage: Stage | None) -> EvalResult:
        """Run the script once (the whole evaluation, or one stage) and score its output."""
        problem = self.problem
        limits = Limits(
            timeout_s=stage.timeout_s if stage else problem.timeout_s,
            memory_mb=stage.memory_mb if stage else problem.memory_mb,
        )
        argv = [str(a) for a in stage.args] if stage else []
        job = functools.partial(_exec_script, source, argv)
        run = await asyncio.to_thread(_sandboxed, job, limits)
        result = EvalResult(
            run.status, artifacts=run.artifacts, timings=run.timings, device=cpu_fingerprint()
        )
        if run.status is Status.OK:
            function = stage.evaluate if stage else "evaluate"
            output = run.payload.decode("utf-8", "replace")
            metrics = await asyncio.to_thread(_score, getattr(self._spec, function), output)
            if isinstance(metrics, str):
                result.status, result.artifacts["error"] = Status.INCORRECT, metrics
            else:
                result.metrics = metrics
        return result


def _sandboxed(job: Any, limits: Limits) -> SandboxRun:
    return run_sandboxed(job, limits, Isolation(new_network=True))


def _exec_script(source: str, argv: list[str]) -> NoReturn:
    """The sandbox job: write the candidate, become a fresh interpreter running it."""
    with open("candidate.py", "w", encoding="utf-8") as f:
        f.write(source)
    os.execv(sys.executable, [sys.executable, "-I", "-c", _RUNNER, "candidate.py", *argv])


def _score(evaluate: Any, output: str) -> dict[str, Any] | str:
    """``evaluate(output)`` as metrics, or the reason it failed."""
    try:
        metrics = evaluate(output)
    except Exception as exc:
        return f"{evaluate.__name__}() raised {type(exc).__name__}: {exc}"[:_TAIL]
    if not isinstance(metrics, dict):
        return f"{evaluate.__name__}() returned a {type(metrics).__name__}, not a dict"
    return metrics
