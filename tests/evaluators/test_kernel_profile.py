"""torch.profiler's top kernels as a timed candidate's ``profile`` artifact: the text, and a
real profile of operators on the CPU (the GPU path is checked by the kernel suite's GPU test)."""

from __future__ import annotations

import pytest

from evoforge.evaluators.kernels.kernelbench._profile import (
    candidate_profile,
    format_profile,
    top_kernels,
)


def test_kernels_are_ranked_by_self_time_with_their_shares():
    text = format_profile(
        [("small", 5, 10.0), ("aten::addmm", 5, 70.0), ("triton_poi_fused_relu_0", 10, 20.0)],
        5,
        "device",
        top=2,
    )
    head, first, second = text.splitlines()
    assert head == "Kernels by self device time over 5 calls of ModelNew (torch.profiler):"
    assert first.split() == ["70.0", "us", "70.0%", "x5", "aten::addmm"]
    assert second.split() == ["20.0", "us", "20.0%", "x10", "triton_poi_fused_relu_0"]
    assert format_profile([("idle", 1, 0.0)], 5, "device") == ""


def test_a_real_profile_names_the_operator_that_takes_the_time():
    torch = pytest.importorskip("torch")

    class Model(torch.nn.Module):
        def forward(self, a, b):
            return torch.relu(a @ b) + 1

    a, b = torch.randn(256, 256), torch.randn(256, 256)
    text = top_kernels(Model(), lambda: [a, b], torch.device("cpu"), calls=3)
    head, *rows = text.splitlines()
    assert head.startswith("Kernels by self CPU time over 3 calls")
    names = [row.split()[-1] for row in rows]
    assert any("mm" in name for name in names[:2]), text  # the matmul dominates
    assert all(f"x{3}" in row for row in rows if "aten::relu" in row)


def test_a_candidate_that_breaks_the_profiler_loses_only_its_profile():
    torch = pytest.importorskip("torch")

    def model(x):
        raise RuntimeError("the candidate failed under the profiler")

    assert candidate_profile(model, lambda: [torch.ones(2)], torch.device("cpu")) == ""
