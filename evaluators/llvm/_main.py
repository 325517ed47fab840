"""The runner process: set up once like a sandbox server, then serve stage requests.

``python -m evoforge.evaluators.llvm`` reads length-prefixed JSON frames on stdin and answers
each with one frame on its original stdout (fd 1 becomes a copy of stderr, so nothing printed
can corrupt a frame). One process per evaluation slot, kept across requests: its start
(importing evoforge, about 1 s of CPU) is paid once, not per stage.

The spec's stage function (``evaluate_<stage>`` or ``evaluate``) is called here, in the
trusted runner, on the measurements, after the policy's process is gone.
"""

from __future__ import annotations

import json
import os
import traceback
from pathlib import Path
from typing import Any

from evoforge.evaluators.sandbox import dumps, prepare_request, read_frame, write_frame


def main() -> int:
    proto_out = os.dup(1)
    proto_in = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    first = read_frame(proto_in)
    if first is None:
        return 0
    setup = json.loads(first)
    isolation, notes = prepare_request(setup)
    write_frame(proto_out, dumps({"ready": True, **notes}))
    while (frame := read_frame(proto_in)) is not None:
        request = json.loads(frame)
        try:
            answer = serve_request(request, isolation)
        except Exception as exc:  # a bug of the runner or the host: reported, never a hang
            answer = {
                "status": "crashed",
                "error": f"the LLVM runner failed: {type(exc).__name__}: {exc}",
                "artifacts": {"runner_traceback": traceback.format_exc()[-3000:]},
            }
        write_frame(proto_out, dumps(answer))
    return 0


def serve_request(request: dict[str, Any], isolation: Any) -> dict[str, Any]:
    """One stage: measure (the task's runner), then score with the spec's function."""
    if request["task"] == "code_layout":
        from evoforge.evaluators.llvm._layout_runner import serve_layout as serve
    else:
        from evoforge.evaluators.llvm._runner import serve
    answer = serve(request, isolation)
    if answer["status"] != "ok" or not request.get("evaluate"):
        return answer
    from evoforge.problems import import_spec

    function = request["evaluate"]
    try:
        metrics = getattr(import_spec(Path(request["spec_path"])), function)(
            answer.pop("measurements")
        )
    except Exception as exc:
        return {
            **answer,
            "status": "runtime_error",
            "error": f"{function}() raised {type(exc).__name__}: {exc}",
        }
    if not isinstance(metrics, dict):
        return {
            **answer,
            "status": "runtime_error",
            "error": f"{function}() returned {type(metrics).__name__}, not a dict",
        }
    answer["metrics"] = metrics
    return answer
