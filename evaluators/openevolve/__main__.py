"""Runner of the ``openevolve`` evaluator: ``python -m evoforge.evaluators.openevolve``.

One JSON request on stdin (see :mod:`evoforge.evaluators.openevolve._evaluator`), one JSON reply
line on stdout. Processes, one fresh runner per candidate and stage::

    runner (trusted)   reads the OpenEvolve folder into memory (as the engine's user)
     └── job           forked in the shared sandbox: writes the folder and the program into
                       its working directory, imports evaluator.py there and calls
                       evaluate(program_path) (or a stage's function); the evaluator runs the
                       program itself (import or subprocess), inside the same sandbox
    runner, after the job exited: checks what came back (JSON numbers and texts only), calls
    the spec's scoring function on it, replies.
"""

from __future__ import annotations

import math
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from evoforge.evaluators.sandbox import (
    Limits,
    own_python_first,
    prepare_request,
    read_request,
    reply,
    run_sandboxed,
)

# `python -m` put the engine's working directory first on sys.path. An OpenEvolve evaluator
# imports from its own folder (put there by job()), never from wherever the engine was started:
# a folder named `openevolve` (an OpenEvolve checkout) or `numpy` there would shadow the real
# modules and the stand-in.
_ENGINE_CWD = os.getcwd()
sys.path[:] = [p for p in sys.path if p not in ("", _ENGINE_CWD)]

_SKIP_DIRS = frozenset(
    {".git", "__pycache__", ".venv", "venv", "node_modules", "openevolve_output", ".mypy_cache"}
)
MAX_FILE_BYTES = 16 * 2**20
MAX_FOLDER_BYTES = 64 * 2**20
_TAIL = 4000
_ARTIFACT_CHARS = 20_000
RESERVED_ARTIFACTS = frozenset({"error", "traceback", "stdout_tail", "stderr_tail", "cascade"})


def main() -> int:
    request = read_request()
    isolation, notes = prepare_request(request)
    own_python_first()  # `python` in the folder's evaluator's subprocesses
    start = time.perf_counter()
    try:
        files = read_folder(Path(request["folder"]))
    except (OSError, ValueError) as exc:
        reply(_problem_failed(f"cannot read the OpenEvolve folder: {exc}"))
        return 0
    limits = Limits(
        timeout_s=float(request["timeout_s"]),
        memory_mb=request.get("memory_mb"),
        result_mb=16,
    )
    run = run_sandboxed(lambda: job(request, files), limits, isolation)
    timings = {"eval_s": run.eval_s, "cpu_s": run.cpu_s, "max_rss_mb": run.max_rss_mb}
    artifacts = run.artifacts
    if run.status.value != "ok":
        reply({"status": run.status.value, "artifacts": artifacts, "timings": timings})
        return 0
    header = run.header
    if header.get("evaluator_failed"):
        reply(_problem_failed(str(header.get("error")), str(header.get("traceback") or "")))
        return 0
    try:
        metrics, their_artifacts = checked(header)
    except ValueError as exc:
        artifacts["error"] = f"the evaluation's result is malformed ({exc}) (tampering?)"
        reply({"status": "sandbox_violation", "artifacts": artifacts, "timings": timings})
        return 0
    artifacts.update(their_artifacts)
    scored = score(request, metrics)
    if isinstance(scored, str):
        artifacts["error"] = scored
        reply({"status": "incorrect", "metrics": metrics, "artifacts": artifacts})
        return 0
    timings["runner_s"] = time.perf_counter() - start
    reply(
        {
            "status": "ok",
            "metrics": scored,
            "artifacts": artifacts,
            "timings": timings,
            "sandbox": notes,
        }
    )
    return 0


def read_folder(folder: Path) -> dict[str, bytes]:
    """Every file of the folder (generated and tool folders skipped), by relative path."""
    files: dict[str, bytes] = {}
    total = 0
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(names):
            path = Path(root, name)
            if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            data = path.read_bytes()
            total += len(data)
            if total > MAX_FOLDER_BYTES:
                raise ValueError(
                    f"{folder} holds more than {MAX_FOLDER_BYTES // 2**20} MiB of files; keep "
                    "the evaluator's data smaller (or move outputs into a subfolder named "
                    "openevolve_output)"
                )
            files[str(path.relative_to(folder))] = data
    return files


# --- the job, in the sandboxed child -------------------------------------------------------------


def job(request: dict[str, Any], files: dict[str, bytes]) -> tuple[dict[str, Any], bytes]:
    """Write the folder and the program, run the OpenEvolve evaluator function on its path."""
    import importlib.util

    from evoforge.evaluators.openevolve._shim import install

    workdir = Path.cwd()
    folder = workdir / "problem"
    for relative, data in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    program = workdir / f"program{request['suffix']}"
    program.write_text(request["source"])
    os.chdir(folder)
    sys.path.insert(0, str(folder))
    shimmed = install()
    function_name = request["function"]
    try:
        spec = importlib.util.spec_from_file_location(
            "evaluation_module", folder / request["evaluator_file"]
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["evaluation_module"] = module
        spec.loader.exec_module(module)
        function = getattr(module, function_name)
    except BaseException as exc:
        return {
            "status": "ok",
            "evaluator_failed": True,
            "error": f"{request['evaluator_file']} failed to load {function_name}(): "
            f"{type(exc).__name__}: {exc}"[:_TAIL],
            "traceback": traceback.format_exc()[-_TAIL:],
        }, b""
    try:
        result = function(str(program))
    except MemoryError:
        return {"status": "memory_limit", "error": f"{function_name}() ran out of memory"}, b""
    except BaseException as exc:
        return {
            "status": "runtime_error",
            "error": f"{function_name}({program.name}) raised {type(exc).__name__}: {exc}"[:_TAIL],
            "traceback": traceback.format_exc()[-_TAIL:],
        }, b""
    metrics, artifacts = _unpack(result)
    if metrics is None:
        return {
            "status": "runtime_error",
            "error": f"{function_name}() returned a {type(result).__name__}; OpenEvolve "
            "evaluators return a dict of metrics or an EvaluationResult(metrics, artifacts)",
        }, b""
    header = {
        "status": "ok",
        "metrics": {str(k): _plain(v) for k, v in metrics.items()},
        "artifacts": {str(k): _text(v) for k, v in (artifacts or {}).items()},
        "shim": shimmed,
    }
    return header, b""


def _unpack(result: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Metrics and artifacts of a dict, a nested dict (:func:`unnest`) or an
    ``EvaluationResult`` (anything with a dict ``metrics``)."""
    from evoforge.evaluators.openevolve._scores import unnest

    if isinstance(result, dict):
        return unnest(result, None)
    metrics = getattr(result, "metrics", None)
    if isinstance(metrics, dict):
        artifacts = getattr(result, "artifacts", None)
        return unnest(metrics, artifacts if isinstance(artifacts, dict) else None)
    return None, None


def _plain(value: Any) -> Any:
    """A metric as JSON: numbers and booleans as they are (NaN and infinities as text), the
    rest as text."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else str(value)
    try:  # numpy scalars
        number = float(value)
    except (TypeError, ValueError):
        return str(value)[:_TAIL]
    return number if math.isfinite(number) else str(number)


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return f"<{len(value)} bytes of binary data>"
    return str(value)[-_ARTIFACT_CHARS:]


# --- back in the trusted runner ------------------------------------------------------------------


def checked(header: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The job's metrics and artifacts, checked to be what it is allowed to send.

    Raises:
        ValueError: not a dict of JSON numbers, booleans, texts or nulls.
    """
    metrics, artifacts = header.get("metrics"), header.get("artifacts") or {}
    if not isinstance(metrics, dict) or not isinstance(artifacts, dict):
        raise ValueError("metrics and artifacts must be dicts")
    for name, value in metrics.items():
        if not isinstance(name, str) or not (
            value is None or isinstance(value, bool | int | float | str)
        ):
            raise ValueError(f"metric {name!r} is a {type(value).__name__}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"metric {name!r} is {value}")
    renamed = {}
    for name, value in artifacts.items():
        key = f"evaluator_{name}" if name in RESERVED_ARTIFACTS else str(name)
        renamed[key] = str(value)[-_ARTIFACT_CHARS:]
    if isinstance(metrics.get("error"), str) and metrics["error"]:
        renamed.setdefault("evaluator_error", metrics["error"][-_TAIL:])
    return metrics, renamed


def score(request: dict[str, Any], metrics: dict[str, Any]) -> dict[str, Any] | str:
    """The spec's scoring function (``scoring``) on the metrics; an error text if it fails."""
    from evoforge.problems import import_spec

    name = request.get("scoring", "evaluate")
    try:
        function = getattr(import_spec(Path(request["spec_path"])), name)
        scored = function(dict(metrics))
        if not isinstance(scored, dict):
            raise TypeError(f"it returned a {type(scored).__name__}, not a dict of metrics")
    except Exception as exc:
        return f"the problem's {name}(metrics) failed: {type(exc).__name__}: {exc}"
    return scored


def _problem_failed(why: str, trace: str = "") -> dict[str, Any]:
    reference = f"the OpenEvolve evaluator failed (not the candidate): {why}"
    artifacts = {"error": reference, "reference_error": reference}
    if trace:
        artifacts["traceback"] = trace
    return {"status": "crashed", "artifacts": artifacts}


if __name__ == "__main__":
    sys.exit(main())
