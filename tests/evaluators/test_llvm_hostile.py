"""Hostile policies against the real LLVM: every failure is contained, typed and explained,
and LLVM never outlives the stage. The corpus is a small C program written for these tests."""

from __future__ import annotations

import os
import time

import pytest

from evoforge.evaluators import Status
from tests.evaluators.llvm_helpers import needs_llvm, run_quick, small_corpus

pytestmark = [needs_llvm, pytest.mark.slow]

WRONG_BYTE_COUNT = """
import os, stat

def decide(features):
    for fd in range(3, 64):  # find the decision channel and write half a frame to it
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                os.write(fd, b"\\x00\\x00\\x01")
        except OSError:
            pass
    while True:
        pass
"""
HOSTILE = {
    "raises": ("def decide(f):\n    raise ValueError('boom')\n", Status.RUNTIME_ERROR, "boom"),
    "crashes": ("import os\ndef decide(f):\n    os._exit(3)\n", Status.CRASHED, "exited"),
    "segfaults": (
        "import ctypes\ndef decide(f):\n    ctypes.string_at(0)\n",
        Status.CRASHED,
        "signal",
    ),
    "loops": ("def decide(f):\n    while True:\n        pass\n", Status.TIMEOUT, "within 1 s"),
    "slow": (
        "import time\ndef decide(f):\n    time.sleep(2)\n    return True\n",
        Status.TIMEOUT,
        "within 1 s",
    ),
    "garbage": ("def decide(f):\n    return 'yes'\n", Status.INCORRECT, "returned 'yes'"),
    "two": ("def decide(f):\n    return 2\n", Status.INCORRECT, "returned 2"),
    "unsendable": ("def decide(f):\n    return object()\n", Status.INCORRECT, "object"),
    "wrong_byte_count": (WRONG_BYTE_COUNT, Status.SANDBOX_VIOLATION, "wrong byte count"),
    "no_function": ("x = 1\n", Status.RUNTIME_ERROR, "defines no function"),
    "writes_before_ready": (
        "import os\nos.write(4, b'\\x00\\x00\\x00\\x02{}')\ndef decide(f):\n    return True\n",
        Status.SANDBOX_VIOLATION,
        "before the policy was ready",
    ),
    "own_unix_socket": (
        "import socket\nsocket.socket(socket.AF_UNIX)\ndef decide(f):\n    return True\n",
        Status.RUNTIME_ERROR,
        "PermissionError: [Errno 13] Permission denied while loading",
    ),
    "syntax": ("def decide(f)\n    return True\n", Status.SYNTAX_ERROR, "SyntaxError"),
}


def _llvm_processes(corpus) -> set[int]:
    """Pids of opt/llc processes using an evoforge channel on this test's corpus."""
    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if b"interactive-channel-base=" in cmdline and str(corpus).encode() in cmdline:
            found.add(int(pid))
    return found


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_policy_is_contained_and_typed(case, tmp_path, monkeypatch):
    small_corpus(tmp_path, monkeypatch)
    source, status, words = HOSTILE[case]
    start = time.perf_counter()
    result = run_quick("llvm_inlining", source)
    assert result.status is status, result.artifacts
    assert words in result.artifacts["error"], result.artifacts
    assert time.perf_counter() - start < 60  # the stage ended, it did not wait for a limit
    assert not _llvm_processes(tmp_path), "LLVM outlived the policy"


def test_good_policy_scores_the_test_program(tmp_path, monkeypatch):
    small_corpus(tmp_path, monkeypatch)
    never = run_quick(
        "llvm_inlining",
        "SEEN = []\ndef decide(f):\n    if not SEEN:\n        SEEN.append(print(sorted(f)))\n"
        "    return False\n",
    )
    stock = run_quick(
        "llvm_inlining", "def decide(f):\n    return f['cost_estimate'] < f['threshold']\n"
    )
    assert never.status is Status.OK and stock.status is Status.OK
    # small.c's figures (396 bytes, 11 sites with LLVM 19): the runner read the cache this
    # process prepared, not another one it found on its own (~/.cache of the real corpus)
    assert stock.metrics["text_bytes"] < 2048 and never.metrics["decisions"] < 50
    assert stock.metrics["text_vs_stock"] == 1.0
    assert never.metrics["text_bytes"] != stock.metrics["text_bytes"]
    assert never.metrics["decisions"] > 0 and never.metrics["inlined_share"] == 0.0
    printed = never.artifacts["stdout_tail"]  # what the policy printed reaches the prompt
    assert "cost_estimate" in printed and "inlining_default" not in printed  # always 0: dropped


def test_priority_policy_must_answer_a_32_bit_number(tmp_path, monkeypatch):
    small_corpus(tmp_path, monkeypatch)
    bad = run_quick("llvm_regalloc_priority", "def decide(f):\n    return float('nan')\n")
    assert bad.status is Status.INCORRECT and "outside [0, 2**32)" in bad.artifacts["error"]
    good = run_quick("llvm_regalloc_priority", "def decide(f):\n    return f['li_size'] * 1.0\n")
    assert good.status is Status.OK and good.metrics["decisions"] > 0
