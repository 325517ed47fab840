"""Naive Triton seed for the kernel suite's gather: one program per output row, the row
copied in blocks."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK = 256


@triton.jit
def gather_kernel(table_ptr, index_ptr, out_ptr, dim, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    row = tl.load(index_ptr + i)
    for start in range(0, dim, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < dim
        values = tl.load(table_ptr + row * dim + cols, mask=mask, other=0.0)
        tl.store(out_ptr + i * dim + cols, values, mask=mask)


def gather(table, index):
    table, index = table.contiguous(), index.contiguous()
    n, dim = index.shape[0], table.shape[1]
    out = torch.empty((n, dim), dtype=table.dtype, device=table.device)
    gather_kernel[(n,)](table, index, out, dim, BLOCK=BLOCK)
    return out


# EVOLVE-BLOCK-END


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, table, index):
        return gather(table, index)
