"""Naive Triton seed for the kernel suite's GELU: one program per block of elements."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK = 1024


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tanh = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)
    tl.store(out_ptr + offsets, 0.5 * x * (1.0 + tanh), mask=mask)


def gelu(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    gelu_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
    return out


# EVOLVE-BLOCK-END


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return gelu(x)
