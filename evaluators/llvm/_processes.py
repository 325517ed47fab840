"""Runner processes of the ``llvm`` evaluator: one per evaluation slot, started lazily.

A request that overruns its deadline, or a runner that dies, costs that runner: its process
group (LLVM and the policy's sandbox included) is killed and the next request starts a new
one. Everything else reuses the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from typing import Any

from evoforge.archive import Status
from evoforge.evaluators.llvm._corpus import CACHE_ENV, cache_dir
from evoforge.evaluators.sandbox import encode_frame, read_frame_async, server_env

_MODULE = "evoforge.evaluators.llvm"
_START_S = 120.0


class RunnerPool:
    """Up to ``size`` runner processes, each serving one request at a time."""

    def __init__(self, size: int, setup: dict[str, Any]) -> None:
        self._setup = setup
        self._idle: asyncio.Queue[_Runner | None] = asyncio.Queue()
        for _ in range(size):
            self._idle.put_nowait(None)  # a slot; its process starts on first use
        self._all: set[_Runner] = set()

    async def call(self, request: dict[str, Any], deadline_s: float) -> dict[str, Any]:
        """The runner's answer, or a ``timeout``/``crashed`` answer saying what happened."""
        runner = await self._idle.get()
        try:
            if runner is None or runner.proc.returncode is not None:
                runner = await self._start()
            answer = await asyncio.wait_for(runner.call(request), deadline_s)
        except TimeoutError:
            self._discard(runner)
            runner = None
            return {
                "status": Status.TIMEOUT.value,
                "error": f"the stage did not finish within {deadline_s:g} s; its runner, "
                "LLVM and the policy were killed",
            }
        except (asyncio.IncompleteReadError, ConnectionError, ValueError, OSError) as exc:
            self._discard(runner)
            runner = None
            return {
                "status": Status.CRASHED.value,
                "error": f"the LLVM runner died during the stage ({type(exc).__name__})",
            }
        except BaseException:
            self._discard(runner)
            runner = None
            raise
        finally:
            self._idle.put_nowait(runner)
        return answer

    async def close(self) -> None:
        for runner in list(self._all):
            self._discard(runner)
            with contextlib.suppress(Exception):
                await runner.proc.wait()

    async def _start(self) -> _Runner:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            _MODULE,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            # The runner gets an allow-listed environment, without our XDG_CACHE_HOME or
            # EVOFORGE_CACHE: it is told where the corpora are, so it reads (and hides from
            # the policy) the cache this process prepared.
            env={**server_env(), CACHE_ENV: str(cache_dir().parent)},
            start_new_session=True,  # its own group: killed whole, LLVM and sandbox included
        )
        runner = _Runner(proc)
        self._all.add(runner)
        try:
            hello = await asyncio.wait_for(runner.call(self._setup), _START_S)
        except BaseException:
            self._discard(runner)
            raise
        if not hello.get("ready"):
            self._discard(runner)
            raise RuntimeError(f"the LLVM runner did not start: {hello}")
        return runner

    def _discard(self, runner: _Runner | None) -> None:
        if runner is None:
            return
        self._all.discard(runner)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(runner.proc.pid, signal.SIGKILL)


class _Runner:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def call(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(encode_frame(json.dumps(message).encode()))
        await self.proc.stdin.drain()
        return json.loads(await read_frame_async(self.proc.stdout))
