"""Honest: a single-pass Triton softmax that loads each row once (whole row in one block).

Must pass every guard: the suite's check that the evaluator does not reject everything.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax(out_ptr, in_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _softmax[(x.shape[0],)](
            out, x, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1])
        )
        return out
