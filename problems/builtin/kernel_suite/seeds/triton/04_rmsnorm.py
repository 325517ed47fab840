"""Naive Triton seed for the kernel suite's RMS norm: one program per row."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

EPS = 1e-6  # the task's eps

# EVOLVE-BLOCK-START
@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    mean_square = tl.sum(x * x, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride + cols, x * tl.rsqrt(mean_square + eps) * w, mask=mask)


def rmsnorm(x, weight):
    x = x.contiguous()
    rows, cols = x.shape
    out = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    rmsnorm_kernel[(rows,)](x, weight, out, cols, x.stride(0), EPS, BLOCK=block)
    return out


# EVOLVE-BLOCK-END


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight):
        return rmsnorm(x, weight.contiguous())
