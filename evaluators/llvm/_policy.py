"""The policy's side of a decision channel: runs inside the shared sandbox.

The sandboxed child (a fork of the trusted runner, contained by
:class:`~evoforge.evaluators.sandbox.Sandbox`: own process group, no capabilities, the
candidates' user, read-only filesystem but its workdir, no network, rlimits, wall clock)
compiles the candidate, says it is ready on the connected socket the runner handed it
(:data:`~evoforge.evaluators.sandbox.CHANNEL_FD`; the sandbox refuses to create UNIX sockets)
and answers one frame per decision: the runner sends the features as a JSON frame, the child
calls the candidate's entry function on them and sends its return value back as a JSON frame.
The child never talks to LLVM: the runner checks each answer before LLVM sees it.
"""

from __future__ import annotations

import json
import sys
import types
from typing import Any

from evoforge.evaluators.sandbox import CHANNEL_FD, dumps, read_frame, write_frame

READY = b"ready"
"""The policy's first frame: its module ran and its entry function exists."""
CANDIDATE_FILENAME = "<policy>"
_TAIL = 4000


def policy_job(request: bytes) -> tuple[dict[str, Any], bytes]:
    """The sandbox job: ``{"source", "entry"}`` in; serve decisions until EOF."""
    import linecache
    import traceback

    fields = json.loads(request)
    source, entry = fields["source"], fields["entry"]
    linecache.cache[CANDIDATE_FILENAME] = (len(source), None, source.splitlines(True), "")
    try:
        code = compile(source, CANDIDATE_FILENAME, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return {"status": "syntax_error", "error": f"{type(exc).__name__}: {exc}"[:_TAIL]}, b""
    module = types.ModuleType("candidate")
    module.__file__ = CANDIDATE_FILENAME
    sys.modules["candidate"] = module
    decisions, loaded = 0, False
    try:
        exec(code, module.__dict__)
        loaded = True
        function = module.__dict__.get(entry)
        if not callable(function):
            return {
                "status": "runtime_error",
                "error": f"the program defines no function `{entry}(features)`",
            }, b""
        fd = CHANNEL_FD
        write_frame(fd, READY)
        while (frame := read_frame(fd)) is not None:
            answer = function(json.loads(frame))
            try:
                body = dumps(answer)
            except (TypeError, ValueError):
                body = dumps({"__unsendable__": f"{type(answer).__name__}: {answer!r}"[:200]})
            write_frame(fd, body)
            decisions += 1
    except MemoryError:
        return {"status": "memory_limit", "error": "ran out of memory (MemoryError)"}, b""
    except BaseException as exc:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        where = (
            f"{entry}() raised {type(exc).__name__}: {exc} (at decision {decisions + 1})"
            if loaded
            else f"the program raised {type(exc).__name__}: {exc} while loading, before any "
            "decision"
        )
        return {
            "status": "runtime_error",
            "error": where[:_TAIL],
            "traceback": tb[-_TAIL:],
        }, b""
    return {"status": "ok", "decisions": decisions}, b""
