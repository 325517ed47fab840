"""Bug (not a cheat), the classic one: the store mask is off by one (``<=``), so each row's
program writes one element past the row; the last row writes past the end of the output.

In the Triton interpreter nothing checks bounds: the write corrupts whatever lies there.
Guard: the harness checks every interpreted load and store against the memory of the
kernel's tensor arguments before it happens: ``incorrect`` ("out-of-bounds store").
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax(out_ptr, in_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols <= n_cols)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _softmax[(x.shape[0],)](
            out, x, x.shape[1], x.stride(0), BLOCK=2 * triton.next_power_of_2(x.shape[1])
        )
        return out
