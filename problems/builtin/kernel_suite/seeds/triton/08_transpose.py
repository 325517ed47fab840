"""Naive Triton seed for the kernel suite's transpose: one program per square tile."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
TILE = 32


@triton.jit
def transpose_kernel(x_ptr, out_ptr, R, C, stride_r, TILE: tl.constexpr):
    r = tl.program_id(0) * TILE + tl.arange(0, TILE)
    c = tl.program_id(1) * TILE + tl.arange(0, TILE)
    mask = (r[:, None] < R) & (c[None, :] < C)
    tile = tl.load(x_ptr + r[:, None] * stride_r + c[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + c[None, :] * R + r[:, None], tile, mask=mask)


def transpose(x):
    x = x.contiguous()
    R, C = x.shape
    out = torch.empty((C, R), dtype=x.dtype, device=x.device)
    transpose_kernel[(triton.cdiv(R, TILE), triton.cdiv(C, TILE))](
        x, out, R, C, x.stride(0), TILE=TILE
    )
    return out


# EVOLVE-BLOCK-END


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return transpose(x)
