"""LLVM 19's interactive channel against the real opt-19 and llc-19, on a small C program
written for these tests: constant policies reproduce LLVM's own figures."""

from __future__ import annotations

import subprocess
import time

import pytest

from evoforge.evaluators.llvm import Channel, text_bytes
from tests.evaluators.llvm_helpers import needs_llvm, small_bitcode

pytestmark = [needs_llvm, pytest.mark.slow]


def _policy_size(tmp_path, bitcode, decide, *, task="inlining"):
    """Compile with ``decide`` answering every decision over the channel; (bytes, decisions)."""
    base = str(tmp_path / f"channel{time.perf_counter_ns()}")
    channel = Channel(base)
    opt_out, obj = tmp_path / "policy.bc", tmp_path / "policy.o"
    if task == "inlining":
        argv = [
            "opt-19",
            "-passes=default<Oz>",
            "-enable-ml-inliner=release",
            f"-inliner-interactive-channel-base={base}",
            "-inliner-interactive-include-default",
            str(bitcode),
            "-o",
            str(opt_out),
        ]
    else:
        argv = ["llc-19", "-filetype=obj", "-regalloc-enable-priority-advisor=release",
                f"-regalloc-priority-interactive-channel-base={base}", str(bitcode),
                "-o", str(obj)]  # fmt: skip
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE)
    deadline = time.perf_counter() + 120
    spec = channel.connect(deadline, alive=lambda: proc.poll() is None)
    decisions = 0
    while (features := channel.observe(deadline)) is not None:
        assert set(features) == set(spec.names)
        channel.answer(decide(features))
        decisions += 1
    channel.close()
    assert proc.wait() == 0, proc.stderr.read()
    if task == "inlining":
        subprocess.run(["llc-19", "-filetype=obj", str(opt_out), "-o", str(obj)], check=True)
    return text_bytes(obj), decisions


def _stock_size(tmp_path, bitcode, *extra):
    out, obj = tmp_path / "stock.bc", tmp_path / "stock.o"
    subprocess.run(["opt-19", "-passes=default<Oz>", *extra, str(bitcode), "-o", str(out)],
                   check=True)  # fmt: skip
    subprocess.run(["llc-19", "-filetype=obj", str(out), "-o", str(obj)], check=True)
    return text_bytes(obj)


def test_constant_false_reproduces_never_inlining(tmp_path):
    bitcode = small_bitcode(tmp_path)
    size, decisions = _policy_size(tmp_path, bitcode, lambda f: 0)
    assert decisions > 0
    assert size == _stock_size(tmp_path, bitcode, "-inline-threshold=-100000")


def test_cost_below_threshold_reproduces_stock_oz(tmp_path):
    bitcode = small_bitcode(tmp_path)
    size, _ = _policy_size(tmp_path, bitcode, lambda f: int(f["cost_estimate"] < f["threshold"]))
    stock = _stock_size(tmp_path, bitcode)
    assert size == stock
    assert size != _policy_size(tmp_path, bitcode, lambda f: 0)[0]  # inlining changed it


def test_inlining_header_names_llvm_features(tmp_path):
    bitcode = small_bitcode(tmp_path)
    seen = []
    _policy_size(tmp_path, bitcode, lambda f: seen.append(f) or 0)
    assert {"cost_estimate", "threshold", "callee_users", "inlining_default"} <= set(seen[0])
    assert all(isinstance(v, int) for v in seen[0].values())


def test_regalloc_priority_channel_answers_every_query(tmp_path):
    bitcode = small_bitcode(tmp_path, optimized=True)
    seen = []
    size, decisions = _policy_size(
        tmp_path, bitcode, lambda f: seen.append(f) or 1.0, task="regalloc"
    )
    assert decisions == len(seen) > 0 and size > 0
    assert set(seen[0]) == {"li_size", "stage", "weight"}


def test_channel_reports_llvm_that_never_connects(tmp_path):
    from evoforge.evaluators.llvm import ChannelClosed

    channel = Channel(str(tmp_path / "dead"))
    proc = subprocess.Popen(["opt-19", "--version"], stdout=subprocess.DEVNULL)
    proc.wait()
    with pytest.raises(ChannelClosed):
        channel.connect(time.perf_counter() + 10, alive=lambda: proc.poll() is None)
