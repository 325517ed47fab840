"""Fixtures for evaluator tests: small problem specs and a way to run candidates through them."""

from __future__ import annotations

import asyncio
import os
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from evoforge.evaluators import EvalResult
from evoforge.evaluators.python._evaluator import PythonEvaluator
from evoforge.problems import load_problem

SEED = """
# EVOLVE-BLOCK-START
def main():
    return {"metrics": {"score": 1.0, "size": 1.0}}
# EVOLVE-BLOCK-END
"""

# evaluate() does what the output asks, so one spec covers every scoring path.
PROBE_SPEC = """
import time

name = "probe"
objectives = {{"score": "maximize"}}
descriptors = {{"size": (0.0, 10.0, 5)}}
preload = {preload!r}
timeout_s = {timeout_s!r}
memory_mb = {memory_mb!r}
options = {options!r}

def evaluate(output):
    if isinstance(output, dict) and "raise" in output:
        raise ValueError(output["raise"])
    if isinstance(output, dict) and "sleep" in output:
        time.sleep(output["sleep"])
    if isinstance(output, dict) and "metrics" in output:
        return output["metrics"]
    return {{"score": 1.0, "size": 1.0, "echo": output}}
"""


def dedent(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


@pytest.fixture
def probe(tmp_path: Path) -> Callable[..., Path]:
    """Write the probe problem with the given limits; returns the spec folder."""
    count = iter(range(1000))

    def make(
        *,
        timeout_s: float = 5,
        memory_mb: int = 512,
        preload: tuple[str, ...] = (),
        options: dict | None = None,
        spec: str = PROBE_SPEC,
    ) -> Path:
        folder = tmp_path / f"probe{next(count)}"
        folder.mkdir()
        (folder / "problem.py").write_text(
            spec.format(
                preload=list(preload),
                timeout_s=timeout_s,
                memory_mb=memory_mb,
                options=options or {},
            )
        )
        (folder / "seed.py").write_text(SEED)
        return folder

    return make


def run_candidates(folder: Path, *sources: str, workers: int = 1) -> list[EvalResult]:
    """Evaluate ``sources`` one after the other with a fresh evaluator."""

    async def go() -> list[EvalResult]:
        async with PythonEvaluator(load_problem(folder), workers=workers) as evaluator:
            return [await evaluator.evaluate(dedent(s)) for s in sources]

    return asyncio.run(go())


def gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (absent, or a zombie nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state in (b"Z", b"X")


async def wait_until(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """Wait for a condition about the outside world (another process), with a deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not condition():
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def wait_until_sync(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    return asyncio.run(wait_until(condition, timeout_s))


IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def processes_in_session(sid: int) -> list[int]:
    """Live processes whose session id is ``sid`` (escapees that called setsid included)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] not in (b"Z", b"X"):
                found.append(int(entry))
    return found


# The hostile suites' shared evaluators and their guard (defined with their harness, which
# itself uses the helpers above, hence the import at the end).
from tests.evaluators.hostile import (  # noqa: E402, F401
    outside,
    problems_dir,
    quick,
    roomy,
    secretive,
    unprivileged,
)
