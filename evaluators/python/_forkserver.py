"""Fork server of the ``python`` evaluator: one per worker, started by ``PythonEvaluator``.

Run as ``python -m evoforge.evaluators.python SPEC_PATH [--preload numpy,scipy] [--network server]
[--user nobody] [--allow-root] [--score-timeout 60] [--workdir-root DIR] [--hide PATH ...]
[--no-filesystem] [--no-prefork] [--unix-sockets] [--no-namespaces] [--no-cgroup]``. Processes::

    PythonEvaluator (asyncio) ==frames on the server's stdin/stdout==> fork server
        ├── scorer     forked once at start-up; imports the spec; calls evaluate()   trusted
        └── candidate  one per request, sandboxed; calls the entry function          hostile

Start-up, once: thread-count variables set to 1; the protocol takes over the original stdin and
stdout (fd 0 becomes /dev/null, fd 1 a copy of stderr, so problem code that prints cannot corrupt a
frame); a network namespace for the server and all its children (``--network server``, the default:
no network at no per-candidate cost); subreaper and non-dumpable
(:func:`~evoforge.evaluators.sandbox._host.harden_server`); a private mount namespace, so that each
candidate's own (read-only but its workdir, ``--hide`` paths covered) is cheaper to make;
``preload`` imports; the scorer; the candidates' working directory; ``gc.freeze()``; the first
candidate process, forked ahead (:class:`~evoforge.evaluators.sandbox._run.Sandbox`); then a
handshake frame ``{"ready": true, ...}`` (or ``{"error": "..."}``).

Per request ``{source, entry, timeout_s, memory_mb}`` (plus ``args``, ``kwargs`` and
``evaluate``, the scoring function's name, for one stage of a cascade): hand it to the waiting
candidate process, supervise it, give its output bytes to the scorer, answer with ``{status,
artifacts, timings, metrics?}``; then, off the latency path, empty the working directory and
fork the next candidate process. Statuses are :class:`~evoforge.evaluators.Status` values;
``ok`` means "ran and evaluate() returned metrics" — the evaluator then checks those metrics
against the problem's declared objectives and descriptors.

Why the spec is imported only in the scorer: a candidate is a fork of this server and can read
all of its memory. This server never runs problem code, so module-level data of the spec and
anything ``evaluate()`` computes or caches live only in the scorer, which no candidate can read
(as a dropped user it cannot ptrace or /proc-read root's processes; as root without
capabilities it cannot either, the scorer being non-dumpable and holding capabilities). On
disk, the evaluator hides the problem's folder from candidates (``--hide``), where the host
allows mount namespaces (``sandbox_info["filesystem"]`` says).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import linecache
import os
import signal
import sys
import time
import traceback
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evoforge.archive import Status
from evoforge.base import jsonio
from evoforge.base.redaction import redact
from evoforge.evaluators.sandbox import (
    DEFAULT_DISK_MB,
    NETWORK_MODES,
    THREAD_VARIABLES,
    Isolation,
    Limits,
    ProtocolError,
    Sandbox,
    Workdir,
    candidate_user,
    die_with_parent,
    dumps,
    enter_network_namespace,
    enter_private_mount_namespace,
    harden_server,
    read_frame,
    write_frame,
)

CANDIDATE_FILENAME = "<candidate>"
CANDIDATE_PID_FILE = "candidate.pid"
_TAIL = 4000
_SCORER_START_S = 600.0  # importing a spec may compute reference data


# ---------------------------------------------------------------------------------------------
# The candidate side (runs inside the sandboxed child)


def run_request(request: bytes) -> tuple[dict[str, Any], bytes]:
    """The sandbox job: decode the request frame and run its candidate."""
    fields = json.loads(request)
    return run_candidate(
        fields["source"], fields["entry"], fields.get("args", ()), fields.get("kwargs") or {}
    )


def run_candidate(
    source: str,
    entry: str,
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], bytes]:
    """Compile and execute ``source``, call ``entry(*args, **kwargs)``, encode its value as JSON.

    Runs in the sandboxed child; the returned header/payload is what the sandbox sends back.
    """
    lines = source.splitlines(True)
    linecache.cache[CANDIDATE_FILENAME] = (len(source), None, lines, CANDIDATE_FILENAME)
    try:
        code = compile(source, CANDIDATE_FILENAME, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:  # ValueError: null bytes in the source
        return _syntax_error(exc), b""
    module = types.ModuleType("candidate")
    module.__file__ = CANDIDATE_FILENAME
    sys.modules["candidate"] = module
    try:
        exec(code, module.__dict__)
        function = module.__dict__.get(entry)
        if not callable(function):
            call = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in (kwargs or {}).items())])
            return {
                "status": "runtime_error",
                "error": f"the program defines no function `{entry}()`; the problem calls "
                + (f"{entry}({call})"[:_TAIL] if call else f"{entry}() with no arguments"),
            }, b""
        output = function(*args, **(kwargs or {}))
        sys.set_int_max_str_digits(0)  # a huge integer is a valid output (encoded on its time)
        try:
            payload = dumps(output)
        except (TypeError, ValueError) as exc:
            return {
                "status": "runtime_error",
                "error": f"{entry}() returned a value that cannot be sent as JSON: {exc}"[:_TAIL],
            }, b""
        except RecursionError:
            return {
                "status": "runtime_error",
                "error": f"{entry}() returned a value nested too deeply to be sent as JSON",
            }, b""
    except MemoryError as exc:
        return {
            "status": "memory_limit",
            "error": "ran out of memory (MemoryError)",
            "traceback": _traceback_tail(exc),
        }, b""
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are failures here too
        return {
            "status": "runtime_error",
            "error": f"{type(exc).__name__}: {exc}"[:_TAIL],
            "traceback": _traceback_tail(exc),
        }, b""
    return {"status": "ok"}, payload


def _syntax_error(exc: SyntaxError | ValueError) -> dict[str, Any]:
    if isinstance(exc, SyntaxError):
        where = f"line {exc.lineno}, column {exc.offset}"
        return {
            "status": "syntax_error",
            "error": f"{type(exc).__name__}: {exc.msg} ({where})",
            "traceback": "".join(traceback.format_exception_only(exc))[-_TAIL:],
        }
    return {"status": "syntax_error", "error": f"the source cannot be compiled: {exc}"}


def _traceback_tail(exc: BaseException) -> str:
    """The traceback without this module's frame, last characters only."""
    tb = exc.__traceback__
    if tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    try:
        text = "".join(traceback.format_exception(type(exc), exc, tb))
    except BaseException:  # formatting can fail too, e.g. out of memory
        text = f"{type(exc).__name__}: (traceback unavailable)"
    return text[-_TAIL:]


# ---------------------------------------------------------------------------------------------
# The scorer (a long-lived trusted child of the server)


class Scorer:
    """A forked process that imports the spec once and calls ``evaluate(output)`` per request.

    A request is two frames: the name of the spec's scoring function (``evaluate``, or a
    cascade stage's), then the output bytes.

    Replaced by a fresh fork when it dies or overruns, so a crash or hang in ``evaluate()`` on
    malformed output costs one candidate, never the server.
    """

    def __init__(self, spec_path: str, *, private_fds: tuple[int, ...]) -> None:
        self.spec_path, self._private_fds = spec_path, private_fds
        self.pid = 0
        self._to = self._from = -1
        self._start()

    def score(self, payload: bytes, timeout_s: float, function: str = "evaluate") -> dict[str, Any]:
        """The scorer's reply: ``{"metrics": {...}}`` or ``{"error": ..., ...}``."""
        if not self.pid:
            self._start()
        try:
            write_frame(self._to, function.encode())
            write_frame(self._to, payload)
            reply = read_frame(self._from, deadline=time.perf_counter() + timeout_s)
        except TimeoutError:
            self._restart()
            return {
                "error": f"{function}() did not finish within {timeout_s:g} s (the scorer "
                "was killed and restarted)"
            }
        except (OSError, ProtocolError):
            reply = None
        if reply is None:
            how = self._restart()
            return {"error": f"{function}() crashed the scoring process ({how}); it was restarted"}
        why = "not a dict"
        try:
            decoded = jsonio.loads_untrusted(reply)
        except ValueError as exc:
            decoded, why = None, str(exc)
        if not isinstance(decoded, dict):
            self._restart()
            return {"error": f"the scoring process sent a malformed reply ({why}); restarted"}
        return decoded

    def close(self) -> None:
        if self.pid:
            os.close(self._to)
            os.close(self._from)
            _kill_and_reap(self.pid)
            self.pid = 0

    def _restart(self) -> str:
        how = _kill_and_reap(self.pid)
        os.close(self._to)
        os.close(self._from)
        self.pid = 0
        self._start()
        return how

    def _start(self) -> None:
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                for fd in (to_w, from_r, *self._private_fds):
                    os.close(fd)
                die_with_parent()
                _scorer_main(self.spec_path, to_r, from_w)
            finally:
                os._exit(0)
        os.close(to_r)
        os.close(from_w)
        self.pid, self._to, self._from = pid, to_w, from_r
        try:
            ready = read_frame(from_r, deadline=time.perf_counter() + _SCORER_START_S)
        except (TimeoutError, ProtocolError, OSError) as exc:
            ready = dumps({"error": f"the scorer did not start: {exc}"})
        reply = json.loads(ready or b'{"error": "the scorer exited while importing the spec"}')
        if not reply.get("ready"):
            self.close()
            raise RuntimeError(reply.get("error", "the scorer failed to start"))


def _scorer_main(spec_path: str, rfd: int, wfd: int) -> None:
    try:
        from evoforge.problems import import_spec

        spec = import_spec(Path(spec_path))
        if not callable(getattr(spec, "evaluate", None)):
            raise TypeError("the spec defines no evaluate(output) function")
    except BaseException as exc:
        write_frame(
            wfd,
            dumps(
                {
                    "error": f"cannot import the problem spec {spec_path}: "
                    f"{type(exc).__name__}: {exc}"
                }
            ),
        )
        return
    write_frame(wfd, dumps({"ready": True}))
    while (name := read_frame(rfd)) is not None and (frame := read_frame(rfd)) is not None:
        function = name.decode()
        evaluate = getattr(spec, function, None)
        if not callable(evaluate):  # the loader checked the names; the spec may have changed
            write_frame(wfd, dumps({"error": f"the problem spec defines no {function}(output)"}))
            continue
        write_frame(wfd, _score_one(evaluate, frame, function))


def _score_one(evaluate: Any, frame: bytes, function: str = "evaluate") -> bytes:
    """Decode one output, call ``evaluate`` on it, encode its metrics, bounded
    (:func:`~evoforge.base.jsonio.sanitize`): whatever the output or the metrics hold (any depth,
    size, number), the reply is a frame the server and the engine can decode and store."""
    try:
        output = jsonio.loads_untrusted(frame)
    except json.JSONDecodeError as exc:  # the sandbox's child wrote it with json.dumps
        return dumps(
            {
                "status": "sandbox_violation",
                "error": f"the output channel held data that is not JSON ({exc})",
            }
        )
    except ValueError as exc:  # valid, but beyond what can be decoded (depth)
        return dumps({"error": f"the output cannot be decoded: {exc}"})
    try:
        metrics = evaluate(output)
    except BaseException as exc:
        return dumps({"error": f"{function}() raised {_describe(exc)}"})
    if not isinstance(metrics, Mapping):
        return dumps(
            {
                "error": f"{function}() returned a {type(metrics).__name__}; it must "
                "return a dict of metrics"
            }
        )
    try:
        return dumps({"metrics": jsonio.sanitize(dict(metrics))})
    except Exception as exc:  # a type JSON has no form for, or a mapping that fails to copy
        return dumps(
            {"error": f"{function}() returned metrics that cannot be stored: {_describe(exc)}"}
        )


def _describe(exc: BaseException) -> str:
    """``Type: message`` of an exception from problem code, capped and with secrets redacted
    (the message may quote the candidate's output, or anything evaluate() holds)."""
    try:
        text = f"{type(exc).__name__}: {str(exc)[: 2 * _TAIL]}"
    except BaseException:  # a __str__ that fails, recurses, or runs out of memory
        text = f"{type(exc).__name__} (its message could not be formatted)"
    return redact(text)[:_TAIL]


def _kill_and_reap(pid: int) -> str:
    try:
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        return "it had already gone"
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL:
        return f"killed by signal {signal.Signals(os.WTERMSIG(status)).name}"
    if os.WIFEXITED(status):
        return f"exited with code {os.WEXITSTATUS(status)}"
    return "it stopped answering"


# ---------------------------------------------------------------------------------------------
# The server loop


class ForkServer:
    """Serves requests on two descriptors until end of file."""

    def __init__(self, args: argparse.Namespace, proto_in: int, proto_out: int) -> None:
        self.proto_in, self.proto_out = proto_in, proto_out
        self.score_timeout_s = args.score_timeout
        self.prefork = not args.no_prefork
        self.network = args.network
        if args.network == "server":
            isolated = enter_network_namespace()
            self.network = "server namespace" if isolated else "host (unshare not permitted)"
        harden_server()
        enter_private_mount_namespace()  # where refused, each candidate makes its mounts private
        for name in filter(None, args.preload.split(",")):
            importlib.import_module(name)
        # After the preloads: what candidates must be able to import includes their folders.
        user, self.user_note, reach = candidate_user(
            args.user, allow_root=args.allow_root, filesystem=not args.no_filesystem
        )
        self.isolation = Isolation(
            user=user,
            new_network=args.network == "candidate",
            filesystem=not args.no_filesystem,
            hidden_paths=tuple(args.hide),
            keep=tuple(args.keep),
            unix_sockets=args.unix_sockets,
            namespaces=not args.no_namespaces,
            cgroup=not args.no_cgroup,
            reach=reach,
            disk_mb=args.disk_mb,
        )
        self.scorer = Scorer(args.spec_path, private_fds=(proto_in, proto_out))
        self.workdir = Workdir(user, args.workdir_root or None)
        self.workdir.export()  # after the scorer's fork: HOME and TMPDIR are for candidates
        # The running candidate's pid (= its process group), for the evaluator to kill the
        # group if this server dies mid-run; root-only when candidates run as another user.
        self._pid_fd = os.open(
            os.path.join(self.workdir.root, CANDIDATE_PID_FILE),
            os.O_RDWR | os.O_CREAT | os.O_TRUNC,
            0o600,
        )
        self._record_candidate(0)
        self.sandbox = Sandbox(
            run_request,
            self.isolation,
            workdir=self.workdir.path,
            keep_pids=lambda: (self.scorer.pid,),
            on_start=self._record_candidate,
        )
        gc.collect()
        gc.freeze()  # candidates then do not copy-on-write the server's objects during GC

    def describe(self) -> dict[str, Any]:
        return {
            "ready": True,
            "pid": os.getpid(),
            "network": self.network,
            "user": self.user_note,
            "workdir_root": self.workdir.root,
            **self.sandbox.protections,
        }

    def serve(self) -> None:
        """Answer requests until the engine closes the pipe; when the engine is gone (killed,
        so a reply cannot be written or a request arrives cut short), exit quietly: a
        traceback would only land on the terminal of whoever ran the engine."""
        engine = os.getppid()
        try:
            if self.prefork:
                self.sandbox.prepare()
            write_frame(self.proto_out, dumps(self.describe()))
            while (frame := read_frame(self.proto_in)) is not None:
                response = self.handle(frame)
                write_frame(self.proto_out, dumps(response))
                del frame, response  # the next candidate is a fork of this process
                # Off the latency path, after the response: a fresh workdir, the next child.
                self.workdir.recycle()
                if self.prefork:
                    self.sandbox.prepare()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the engine closed its end: nobody is left to answer
        except ProtocolError:
            if os.getppid() == engine:
                raise  # a live engine sent a bad frame: a bug to see
        finally:
            self.sandbox.close()
            self.scorer.close()
            self.workdir.close()

    def handle(self, frame: bytes) -> dict[str, Any]:
        """Run the candidate of one request frame and score it."""
        start = time.perf_counter()
        request = json.loads(frame)
        limits = Limits(timeout_s=float(request["timeout_s"]), memory_mb=int(request["memory_mb"]))
        run = self.sandbox.run(frame, limits)
        self._record_candidate(0)
        response: dict[str, Any] = {
            "status": run.status.value,
            "artifacts": run.artifacts,
            "timings": run.timings,
        }
        if run.status is Status.OK:
            score_start = time.perf_counter()
            reply = self.scorer.score(
                run.payload, self.score_timeout_s, request.get("evaluate", "evaluate")
            )
            response["timings"]["score_s"] = time.perf_counter() - score_start
            if "metrics" in reply:
                response["metrics"] = reply["metrics"]
            else:  # evaluate()'s traceback stays here: it may quote reference data
                response["status"] = reply.get("status", Status.INCORRECT.value)
                response["artifacts"]["error"] = reply["error"]
        response["timings"]["total_s"] = time.perf_counter() - start
        return response

    def _record_candidate(self, pid: int) -> None:
        os.pwrite(self._pid_fd, b"%-12d" % pid, 0)


def _take_protocol_fds() -> tuple[int, int]:
    """Move the protocol to private descriptors; fd 0 becomes /dev/null, fd 1 a copy of 2."""
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    return proto_in, proto_out


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evoforge.evaluators.python")
    parser.add_argument("spec_path")
    parser.add_argument("--preload", default="", help="comma-separated modules to import once")
    parser.add_argument("--network", choices=NETWORK_MODES, default="server")
    parser.add_argument("--user", default="", help="run candidates as this user when root")
    parser.add_argument(
        "--allow-root",
        action="store_true",
        help="candidates may run as uid 0 (else a server that would run them so refuses)",
    )
    parser.add_argument(
        "--unix-sockets", action="store_true", help="let candidates create UNIX sockets"
    )
    parser.add_argument(
        "--no-namespaces", action="store_true", help="no PID and IPC namespace per candidate"
    )
    parser.add_argument("--no-cgroup", action="store_true", help="no cgroup for candidates")
    parser.add_argument(
        "--disk-mb", type=int, default=DEFAULT_DISK_MB, help="candidates' disk quota (0: none)"
    )
    parser.add_argument("--score-timeout", type=float, default=60.0)
    parser.add_argument(
        "--workdir-root",
        default="",
        help="an empty directory for the candidates' working directory",
    )
    parser.add_argument(
        "--hide",
        action="append",
        default=[],
        metavar="PATH",
        help="a file or folder candidates must not see (repeatable)",
    )
    parser.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="PATH",
        help="a file or folder candidates must read inside a covered folder (repeatable)",
    )
    parser.add_argument(
        "--no-filesystem",
        action="store_true",
        help="no mount namespace: candidates can write wherever their user may",
    )
    parser.add_argument(
        "--no-prefork",
        action="store_true",
        help="fork each child when its request arrives (for benchmarks)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    for name in THREAD_VARIABLES:  # before any preload can start a thread pool
        os.environ[name] = "1"
    proto_in, proto_out = _take_protocol_fds()
    try:
        server = ForkServer(args, proto_in, proto_out)
    except BaseException as exc:
        with contextlib.suppress(BrokenPipeError):  # the engine may be gone already
            write_frame(proto_out, dumps({"error": f"{type(exc).__name__}: {exc}"}))
        return 1
    server.serve()
    return 0
