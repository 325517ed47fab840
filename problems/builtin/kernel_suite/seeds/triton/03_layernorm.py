"""Naive Triton seed for the kernel suite's layer norm: one program per row, two passes over
the row held in one block."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

EPS = 1e-5  # the task's eps

# EVOLVE-BLOCK-START
@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride + cols, diff * rstd * w + b, mask=mask)


def layernorm(x, weight, bias):
    x = x.contiguous()
    rows, cols = x.shape
    out = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    layernorm_kernel[(rows,)](x, weight, bias, out, cols, x.stride(0), EPS, BLOCK=block)
    return out


# EVOLVE-BLOCK-END


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight, bias):
        return layernorm(x, weight.contiguous(), bias.contiguous())
