"""The offline model moves a kernel's tuning knobs (block sizes, warps, stages, CUDA thread
counts) by factors of two, and other integers as before."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings, strategies as st

from evoforge.evolve.edits import apply_edit
from evoforge.evolve.offline._mutator import mutate

TRITON = """\
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


# EVOLVE-BLOCK-START
BLOCK = 1024
SCALE = 1000


def launch(x, y, out):
    n = out.numel()
    grid = (triton.cdiv(n, BLOCK),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=BLOCK, num_warps=4, num_stages=2)
    return out * SCALE
# EVOLVE-BLOCK-END
"""

CUDA = """\
#include <cuda_runtime.h>

// EVOLVE-BLOCK-START
__global__ void __launch_bounds__(256) add(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += x[i];
}

void run(const float* x, float* y, int n) {
    const int threads = 256;
    add<<<(n + threads - 1) / threads, threads>>>(x, y, n);
}
// EVOLVE-BLOCK-END
"""

KNOBS = {
    "python": re.compile(r"(BLOCK = |num_warps=|num_stages=)(\d+)"),
    "cpp": re.compile(r"(__launch_bounds__\(|const int threads = )(\d+)"),
}


def _knobs(source: str, language: str) -> list[tuple[str, int]]:
    return [(m.group(1), int(m.group(2))) for m in KNOBS[language].finditer(source)]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**63))
def test_a_triton_kernel_s_knobs_move_by_factors_of_two(seed: int) -> None:
    answer = mutate(TRITON, [], np.random.default_rng(seed), weights={"constant": 1.0})
    child = apply_edit(TRITON, answer).source
    before, after = _knobs(TRITON, "python"), _knobs(child, "python")
    for (name, old), (_, new) in zip(before, after, strict=True):
        assert new in (old, 2 * old, old // 2), (name, old, new)
        assert new & (new - 1) == 0 and new >= 1, (name, new)  # a power of two, as Triton needs


def test_the_knobs_do_move_and_other_integers_keep_the_generic_move() -> None:
    seen: dict[str, set[int]] = {"BLOCK = ": set(), "num_warps=": set(), "SCALE": set()}
    for seed in range(200):
        answer = mutate(TRITON, [], np.random.default_rng(seed), weights={"constant": 1.0})
        child = apply_edit(TRITON, answer).source
        for name, value in _knobs(child, "python"):
            if name in seen:
                seen[name].add(value)
        seen["SCALE"].add(int(re.search(r"SCALE = (\d+)", child).group(1)))
    assert seen["BLOCK = "] >= {512, 1024, 2048}
    assert seen["num_warps="] >= {2, 4, 8}
    assert any(v & (v - 1) for v in seen["SCALE"])  # 1000 -> 1093 and the like, as before


def test_cuda_block_sizes_move_by_factors_of_two() -> None:
    moved = set()
    for seed in range(150):
        answer = mutate(
            CUDA, [], np.random.default_rng(seed), weights={"constant": 1.0}, language="cpp"
        )
        child = apply_edit(CUDA, answer).source
        for name, value in _knobs(child, "cpp"):
            assert value in (128, 256, 512), (name, value)
            if value != 256:
                moved.add(name)
    assert moved == {"const int threads = "}  # __launch_bounds__(256): no site in C++'s parse
