"""Bug: each row's program also writes one element before the start of its input row.

For the first row that is just before the input tensor: still inside the buffer the harness
placed the input in, so the interpreter's bounds check lets it through, but it overwrites the
canary bytes there. Guard: canaries around every input: ``incorrect`` ("canary bytes just
before input 0 were overwritten"); for the other rows, the input fingerprints.
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
    tl.store(in_ptr + row * stride - 1, 0.0)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _softmax[(x.shape[0],)](
            out, x, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1])
        )
        return out
