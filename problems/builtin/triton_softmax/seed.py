"""Seed for triton_softmax: row-wise softmax as a Triton kernel, one program per row.

The kernel walks each row in chunks of ``2 ** BLOCK_EXP`` columns, three times: the row's
maximum, the sum of ``exp(x - max)`` (both accumulated per lane and reduced once), then the
normalised values. Inside the EVOLVE-BLOCK the things worth changing are the chunk size,
``NUM_WARPS`` and ``NUM_STAGES`` (GPU scheduling; the interpreter ignores them) and the passes
themselves: a single-pass online softmax (running max with a rescaled running sum) reads each
row twice instead of three times.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_EXP = 10
NUM_WARPS = 4
NUM_STAGES = 2


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    in_row = in_ptr + row * in_stride
    out_row = out_ptr + row * out_stride
    offsets = tl.arange(0, BLOCK)
    # Pass 1: the row's maximum, kept per lane and reduced once at the end.
    lane_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offsets
        x = tl.load(in_row + cols, mask=cols < n_cols, other=float("-inf"))
        lane_max = tl.maximum(lane_max, x)
    row_max = tl.max(lane_max, axis=0)
    # Pass 2: the sum of exp(x - max), per lane, then reduced.
    lane_sum = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offsets
        x = tl.load(in_row + cols, mask=cols < n_cols, other=float("-inf"))
        lane_sum += tl.exp(x - row_max)
    row_sum = tl.sum(lane_sum, axis=0)
    # Pass 3: normalise and store.
    for start in range(0, n_cols, BLOCK):
        cols = start + offsets
        mask = cols < n_cols
        x = tl.load(in_row + cols, mask=mask, other=float("-inf"))
        tl.store(out_row + cols, tl.exp(x - row_max) / row_sum, mask=mask)
# EVOLVE-BLOCK-END


def softmax(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    out = torch.empty_like(x)
    softmax_kernel[(rows,)](
        out,
        x,
        cols,
        x.stride(0),
        out.stride(0),
        BLOCK=2**BLOCK_EXP,
        num_warps=NUM_WARPS,
        num_stages=NUM_STAGES,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax(x.contiguous())
