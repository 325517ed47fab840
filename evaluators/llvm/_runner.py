"""The trusted runner of one stage: LLVM on a corpus, the policy in the shared sandbox.

Served by the runner process ``python -m evoforge.evaluators.llvm``
(:mod:`~evoforge.evaluators.llvm._main`: one per evaluation slot, a JSON frame per stage request
and reply, kept across requests). Processes::

    runner (trusted: prepare() = no network, subreaper, not dumpable)
      ├── policy child   Sandbox: the candidate's decide(), answers over a socketpair  hostile
      └── opt-19 / llc-19 / clang-19 / valgrind, one after another                  trusted

Why this shape: LLVM asks for one decision at a time over named pipes and waits for each, so
the policy must run *while* LLVM runs, yet nothing the policy does may reach LLVM unchecked or
touch what is measured. The runner is the broker: it reads each observation from LLVM
(:class:`~evoforge.evaluators.llvm._channel.Channel`), sends the features to the sandboxed
policy as a JSON frame, waits for the answer with a per-decision deadline, checks it (an
inlining answer is a bool; a priority a finite number in [0, 2**32)) and only then writes the
advice bytes to LLVM. LLVM's output, the object file and the measurements live in the runner's
own 0700 folder; the policy's sandbox sees its empty workdir and nothing else writable, and the
corpus cache and the problem folder are hidden from it.

A policy that raises, crashes, loops, is too slow for one decision, answers garbage or writes
bytes that are not a frame stops the stage with a typed status and the reason; LLVM is
killed at once (it is the runner's child and in its process group, so a runner killed for
its own deadline takes LLVM with it). LLVM itself runs under an address-space limit.

Per library of the stage's corpus: ``opt`` (inlining) or ``llc`` (priority) with the channel,
``llc`` to an object, ``.text`` bytes read from the ELF, and with ``"instructions": true`` the
library's workload linked and counted under callgrind. The spec's stage function (trusted,
imported here after the policy is gone) turns those measurements into metrics.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import select
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from evoforge.archive import Status
from evoforge.evaluators.llvm._channel import Channel, ChannelClosed
from evoforge.evaluators.llvm._corpus import cache_dir, corpus, library_files
from evoforge.evaluators.llvm._elf import text_bytes
from evoforge.evaluators.llvm._policy import READY, policy_job
from evoforge.evaluators.llvm._tools import tool
from evoforge.evaluators.sandbox import (
    Isolation,
    Limits,
    Sandbox,
    SandboxRun,
    dumps,
    encode_frame,
)

LLVM_MEMORY_MB = 4096
_PRIORITY_MAX = 2.0**32
_MAX_ANSWER = 16 * 2**20  # bytes of one answer frame (a layout of a huge function fits)


class PolicyFailure(Exception):  # noqa: N818 - a verdict about the candidate
    """The policy failed a decision; ``status`` is how the candidate's result reads."""

    def __init__(self, status: Status, error: str) -> None:
        super().__init__(error)
        self.status, self.error = status, error


class LlvmFailure(Exception):  # noqa: N818
    """LLVM (or the link, or the workload) failed for a policy whose answers were valid."""


def check_answer(task: str, answer: Any, index: int) -> float | int:
    """The advice value for ``answer``, or :class:`PolicyFailure` saying what was wrong."""
    where = f"decision {index}"
    if isinstance(answer, dict) and "__unsendable__" in answer:
        raise PolicyFailure(
            Status.INCORRECT, f"{where}: decide() returned {answer['__unsendable__']}"
        )
    if task == "inlining":
        if isinstance(answer, bool) or (isinstance(answer, int) and answer in (0, 1)):
            return int(answer)
        raise PolicyFailure(
            Status.INCORRECT,
            f"{where}: decide() returned {answer!r} ({type(answer).__name__}); an inlining "
            "policy returns True (inline this call site) or False",
        )
    if isinstance(answer, bool) or not isinstance(answer, int | float):
        raise PolicyFailure(
            Status.INCORRECT,
            f"{where}: decide() returned {answer!r} ({type(answer).__name__}); a priority "
            "policy returns a number",
        )
    if not (math.isfinite(answer) and 0 <= answer < _PRIORITY_MAX):
        raise PolicyFailure(
            Status.INCORRECT,
            f"{where}: priority {answer!r} is outside [0, 2**32); LLVM stores it as an "
            "unsigned 32-bit number",
        )
    return float(answer)


class PolicyLink:
    """The runner's end of the policy's socket: one request/answer per decision."""

    def __init__(self, conn: socket.socket, decision_timeout_s: float) -> None:
        self.conn, self.fd = conn, conn.fileno()
        self.decision_timeout_s = decision_timeout_s
        self.decisions = 0
        self.yes = 0  # inlining decisions answered "inline"
        self.policy_s = 0.0

    def ask(self, features: Any) -> Any:
        """Send one decision's features; the policy's answer (a JSON value)."""
        self.decisions += 1
        start = time.perf_counter()
        try:
            os.write(self.fd, encode_frame(dumps(features)))
            frame = self._frame(start + self.decision_timeout_s)
        except OSError:
            frame = None
        finally:
            self.policy_s += time.perf_counter() - start
        if frame is None:
            raise PolicyFailure(Status.CRASHED, "the policy stopped answering")  # see its run
        try:
            return json.loads(frame)
        except ValueError:
            raise PolicyFailure(
                Status.SANDBOX_VIOLATION,
                f"decision {self.decisions}: the policy's channel held a frame that is not "
                "JSON; only the harness may write to it",
            ) from None

    def _frame(self, deadline: float) -> bytes | None:
        """One answer frame; None if the policy hung up between frames."""
        data = bytearray()
        size = None
        while size is None or len(data) < 4 + size:
            remaining = math.ceil((deadline - time.perf_counter()) * 1000)
            poller = select.poll()
            poller.register(self.fd, select.POLLIN)
            if remaining <= 0 or not poller.poll(remaining):
                if data:
                    raise PolicyFailure(
                        Status.SANDBOX_VIOLATION,
                        f"decision {self.decisions}: the policy's channel held {len(data)} "
                        "bytes that are not a whole answer frame (a wrong byte count); only "
                        "the harness may write to it",
                    )
                raise PolicyFailure(
                    Status.TIMEOUT,
                    f"decision {self.decisions}: no answer within "
                    f"{self.decision_timeout_s:g} s (each decision has this limit); the policy "
                    "was killed",
                )
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                if data:
                    raise PolicyFailure(
                        Status.SANDBOX_VIOLATION,
                        f"decision {self.decisions}: the policy hung up after {len(data)} "
                        "bytes of an answer frame (a wrong byte count)",
                    )
                return None
            data += chunk
            if size is None and len(data) >= 4:
                (size,) = struct.unpack("!I", bytes(data[:4]))
                if size > _MAX_ANSWER:
                    raise PolicyFailure(
                        Status.SANDBOX_VIOLATION,
                        f"decision {self.decisions}: the policy announced a {size}-byte "
                        "answer; only the harness may write to its channel",
                    )
        if len(data) > 4 + size:
            raise PolicyFailure(
                Status.SANDBOX_VIOLATION,
                f"decision {self.decisions}: the policy sent {len(data) - 4 - size} bytes "
                "more than one answer frame (a wrong byte count)",
            )
        return bytes(data[4:])


def run_llvm(
    argv: list[str], base: str | None, link: PolicyLink | None, task: str, deadline: float
) -> str:
    """Run one LLVM command; with ``base``, broker its channel through ``link``.

    Returns LLVM's stderr tail. Raises :class:`PolicyFailure` (LLVM killed) or
    :class:`LlvmFailure`.
    """
    channel = Channel(base) if base is not None else None
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err
        )
        with contextlib.suppress(OSError):
            limit = LLVM_MEMORY_MB * 2**20
            resource.prlimit(proc.pid, resource.RLIMIT_AS, (limit, limit))
        try:
            if channel is not None and link is not None:
                channel.connect(deadline, alive=lambda: proc.poll() is None)
                while (features := channel.observe(deadline)) is not None:
                    features.pop("inlining_default", None)  # always 0 in this channel
                    advice = check_answer(task, link.ask(features), link.decisions)
                    link.yes += task == "inlining" and advice == 1
                    channel.answer(advice)
            proc.wait(timeout=max(0.1, deadline - time.perf_counter()))
        except subprocess.TimeoutExpired:
            raise LlvmFailure(
                f"{Path(argv[0]).name} did not finish before the stage's deadline"
            ) from None
        except TimeoutError as exc:
            raise LlvmFailure(f"{Path(argv[0]).name} stalled: {exc}") from None
        except ChannelClosed:
            proc.wait(timeout=max(0.1, deadline - time.perf_counter()))
        finally:
            if proc.poll() is None:
                proc.kill()  # the policy failed, or LLVM overran: never leave it running
                proc.wait()
            if channel is not None:
                channel.close()
        err.seek(0)
        stderr = err.read()[-3000:].decode("utf-8", "replace")
    if proc.returncode != 0:
        raise LlvmFailure(
            f"{Path(argv[0]).name} exited with {proc.returncode}: {stderr.strip()[-1500:]}"
        )
    return stderr


def measure_stock(task: str, corpus_name: str, *, instructions: bool = False) -> dict[str, Any]:
    """Stock LLVM's measurements of a corpus (``default<Oz>``'s own inliner, ``llc``'s own
    priorities), with no policy: the baseline every result is compared with.

    Measured for real the first time (seconds: one ``opt``/``llc`` per library, plus
    callgrind for ``instructions``) and kept in ``<cache>/stock.json`` under the LLVM version,
    task and corpus, since stock output only changes with them.
    """
    from evoforge.evaluators.llvm._corpus import read_manifest
    from evoforge.evaluators.llvm._tools import llvm_version

    path = cache_dir() / "stock.json"
    key = f"{llvm_version()}|{task}|{corpus_name}|{int(instructions)}"
    try:
        known = json.loads(path.read_text())
    except (OSError, ValueError):
        known = {}
    libraries = corpus(corpus_name)
    stamp = read_manifest(cache_dir()).get("libraries", {})
    stamp = {name: stamp.get(name, {}).get("bitcode_sha256") for name in libraries}
    if key in known and known[key].get("stamp") == stamp:
        return known[key]["result"]
    root = Path(tempfile.mkdtemp(prefix="evoforge-llvm-stock-"))
    try:
        measured = {
            name: measure_library(name, task, root, None, instructions, time.perf_counter() + 600)
            for name in libraries
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    result: dict[str, Any] = {
        "libraries": measured,
        "text_bytes": sum(m["text_bytes"] for m in measured.values()),
    }
    if instructions:
        result["instructions"] = sum(m.get("instructions", 0) for m in measured.values())
    known[key] = {"stamp": stamp, "result": result}
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(known, indent=1))
    os.replace(tmp, path)
    return result


def measure_library(
    name: str,
    task: str,
    work: Path,
    link: PolicyLink | None,
    instructions: bool,
    deadline: float,
) -> dict[str, Any]:
    """Compile one library with the policy (``link``) or stock (None); measure it."""
    files = library_files(name)
    obj = work / f"{name}.o"
    base = str(work / f"{name}.channel") if link is not None else None
    start = time.perf_counter()
    before = link.decisions if link is not None else 0
    yes_before = link.yes if link is not None else 0
    if task == "inlining":
        optimized = work / f"{name}.opt.bc"
        argv = [tool("opt-19"), "-passes=default<Oz>"]
        if link is not None:
            argv += [
                "-enable-ml-inliner=release",
                f"-inliner-interactive-channel-base={base}",
                "-inliner-interactive-include-default",
            ]
        run_llvm([*argv, str(files.bitcode), "-o", str(optimized)], base, link, task, deadline)
        run_llvm(
            [tool("llc-19"), "-filetype=obj", str(optimized), "-o", str(obj)],
            None,
            None,
            task,
            deadline,
        )
    else:
        argv = [tool("llc-19"), "-filetype=obj"]
        if link is not None:
            argv += [
                "-regalloc-enable-priority-advisor=release",
                f"-regalloc-priority-interactive-channel-base={base}",
            ]
        run_llvm([*argv, str(files.optimized), "-o", str(obj)], base, link, task, deadline)
    result: dict[str, Any] = {
        "text_bytes": text_bytes(obj),
        "decisions": (link.decisions - before) if link is not None else 0,
        "inlined": (link.yes - yes_before) if link is not None else 0,
        "compile_s": time.perf_counter() - start,
    }
    if instructions and files.workload is not None:
        result["instructions"] = _instructions(name, obj, files.workload, work, deadline)
    return result


def _instructions(name: str, obj: Path, workload: Path, work: Path, deadline: float) -> int:
    from evoforge.evaluators.timing import CallgrindError, callgrind_instructions

    exe = work / f"{name}.exe"
    done = subprocess.run(
        [tool("clang-19"), "-fuse-ld=lld", "-no-pie", str(obj), str(workload), "-o", str(exe)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise LlvmFailure(f"linking the {name} workload failed: {done.stderr.strip()[-1500:]}")
    try:
        return callgrind_instructions(
            [str(exe)],
            cwd=work,
            env={"PATH": "/usr/bin:/bin"},
            timeout_s=max(1.0, deadline - time.perf_counter()),
        )
    except CallgrindError as exc:
        raise LlvmFailure(f"the {name} workload failed: {exc}") from None


class PolicySandbox:
    """The sandboxed policy child and the connected socket it answers on (a socketpair made
    before the fork: the child may not create UNIX sockets, so it can reach no other)."""

    def __init__(self, request: dict[str, Any], isolation: Isolation, root: Path) -> None:
        self.workdir = root / "policy"
        self.workdir.mkdir(mode=0o700)
        if isolation.user is not None:
            os.chown(self.workdir, *isolation.user)
        self.conn, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        hidden = (*isolation.hidden_paths, *request.get("hidden", ()), str(cache_dir()))
        try:
            self.sandbox = Sandbox(
                policy_job,
                replace(isolation, hidden_paths=tuple(p for p in hidden if os.path.exists(p))),
                workdir=str(self.workdir),
                on_start=self._started,
                channel=child_end.fileno(),
            )
            self.sandbox.prepare()  # fork in this (main) thread; the run is supervised in another
        finally:
            child_end.close()  # the child's copy alone: its exit reads here as the end
        self.pid = 0
        self.run: SandboxRun | None = None
        payload = dumps({"source": request["source"], "entry": request["entry"]})
        limits = Limits(
            timeout_s=float(request["timeout_s"]) + 5.0, memory_mb=int(request["memory_mb"])
        )
        self._thread = threading.Thread(target=self._supervise, args=(payload, limits))
        self._thread.start()

    def accept(self, timeout_s: float) -> socket.socket:
        """The channel, once the policy said it is ready (its module ran) within ``timeout_s``."""
        expected = encode_frame(READY)
        self.conn.settimeout(timeout_s)
        hello, ended = b"", False
        with contextlib.suppress(OSError):  # a timeout included
            while len(hello) < len(expected):
                chunk = self.conn.recv(len(expected))
                ended = not chunk  # the child exited: let it report why before anything else
                hello += chunk
                if ended or not expected.startswith(hello):
                    break
        if hello != expected:
            if not ended:
                self.kill()
            self.finish()
            self.conn.close()
            run = self.run
            if hello and not expected.startswith(hello):
                raise PolicyFailure(
                    Status.SANDBOX_VIOLATION,
                    "the policy's channel held bytes before the policy was ready; only the "
                    "harness may write to it",
                )
            why = run.error if run is not None and run.error else "it did not say it was ready"
            status = (
                run.status
                if run is not None and run.status is not Status.OK
                else (Status.RUNTIME_ERROR)
            )
            raise PolicyFailure(status, f"the policy never started answering: {why}") from None
        self.conn.settimeout(None)
        return self.conn

    def kill(self) -> None:
        if self.pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)

    def finish(self, grace_s: float = 2.0) -> SandboxRun:
        """Wait for the child (it returns once its socket closes); kill it after ``grace_s``."""
        self._thread.join(grace_s)
        if self._thread.is_alive():
            self.kill()
            self._thread.join()
        self.pid = 0  # its group is gone: nothing left to kill (and the number may be reused)
        assert self.run is not None
        return self.run

    def settle(self, failure: PolicyFailure | None) -> PolicyFailure | None:
        """End the policy and give the stage's verdict on it: ``failure`` as found by the
        runner, or what the policy's own run says (a crash explained by its exit).

        A policy that failed by answering (too slow, garbage, tampering) is killed without
        grace; otherwise it ends once its channel is closed.
        """
        if failure is not None and failure.status is not Status.CRASHED:
            self.kill()
        run = self.finish()
        if failure is None and run.status is not Status.OK:
            return PolicyFailure(run.status, run.error or "the policy failed")
        if failure is not None and failure.status is Status.CRASHED and run.error:
            status = run.status if run.status is not Status.OK else Status.CRASHED
            return PolicyFailure(status, run.error)
        return failure

    def _started(self, pid: int) -> None:
        self.pid = pid

    def _supervise(self, payload: bytes, limits: Limits) -> None:
        self.run = self.sandbox.run(payload, limits)


def serve(request: dict[str, Any], isolation: Isolation) -> dict[str, Any]:
    """Run one stage request (see the module docstring); the reply as a dict."""
    task = request["task"]
    start = time.perf_counter()
    deadline = start + float(request["timeout_s"])
    stock = request.get("stock", False)
    libraries = corpus(request["corpus"])
    instructions = bool(request.get("instructions"))
    root = Path(tempfile.mkdtemp(prefix="evoforge-llvm-"))
    os.chmod(root, 0o711)
    measured: dict[str, Any] = {}
    policy: PolicySandbox | None = None
    link: PolicyLink | None = None
    failure: PolicyFailure | None = None
    llvm_error = ""
    try:
        if not stock:
            policy = PolicySandbox(request, isolation, root)
            link = PolicyLink(
                policy.accept(min(30.0, float(request["timeout_s"]))),
                float(request.get("decision_timeout_s", 1.0)),
            )
        work = root / "llvm"
        work.mkdir(mode=0o700)
        for name in libraries:
            measured[name] = measure_library(name, task, work, link, instructions, deadline)
    except PolicyFailure as exc:
        failure = exc
    except LlvmFailure as exc:
        llvm_error = str(exc)
    finally:
        if link is not None:
            link.conn.close()  # the policy's read sees the end and it returns
        if policy is not None:
            failure = policy.settle(failure)
        shutil.rmtree(root, ignore_errors=True)
    elapsed = time.perf_counter() - start
    policy_s = link.policy_s if link is not None else 0.0
    timings = {"stage_s": elapsed, "policy_s": policy_s, "llvm_s": max(0.0, elapsed - policy_s)}
    artifacts: dict[str, str] = {}
    if policy is not None and policy.run is not None:
        artifacts.update(policy.run.artifacts)
        artifacts.pop("error", None)
    if failure is not None:
        return {
            "status": failure.status.value,
            "error": failure.error,
            "artifacts": artifacts,
            "timings": timings,
        }
    if llvm_error:
        return {
            "status": Status.CRASHED.value,
            "error": f"LLVM failed: {llvm_error}",
            "artifacts": artifacts,
            "timings": timings,
        }
    totals = {
        "libraries": measured,
        "text_bytes": sum(m["text_bytes"] for m in measured.values()),
        "decisions": sum(m["decisions"] for m in measured.values()),
        "inlined": sum(m["inlined"] for m in measured.values()),
        **timings,
    }
    if instructions:
        counts = [m["instructions"] for m in measured.values() if "instructions" in m]
        totals["instructions"] = sum(counts) if counts else None
    return {
        "status": Status.OK.value,
        "measurements": totals,
        "artifacts": artifacts,
        "timings": timings,
    }
