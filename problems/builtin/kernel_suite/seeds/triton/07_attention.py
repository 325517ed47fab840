"""Naive Triton seed for the kernel suite's attention: one program per (batch-head, query
row), keys in blocks with an online softmax; scores by broadcast-and-sum (no tl.dot)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_N = 32


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, D, scale, BLOCK_N: tl.constexpr,
                     BLOCK_D: tl.constexpr):
    bh = tl.program_id(0)
    row = tl.program_id(1)
    d = tl.arange(0, BLOCK_D)
    d_mask = d < D
    base = bh * S * D
    q = tl.load(q_ptr + base + row * D + d, mask=d_mask, other=0.0)
    m_i = tl.max(tl.full([BLOCK_N], float("-inf"), tl.float32), axis=0)
    l_i = tl.sum(tl.zeros([BLOCK_N], tl.float32), axis=0)
    acc = tl.zeros([BLOCK_D], tl.float32)
    for start in range(0, S, BLOCK_N):
        n = start + tl.arange(0, BLOCK_N)
        n_mask = n < S
        kv_mask = n_mask[:, None] & d_mask[None, :]
        offsets = base + n[:, None] * D + d[None, :]
        k = tl.load(k_ptr + offsets, mask=kv_mask, other=0.0)
        s = tl.sum(k * q[None, :], axis=1) * scale
        s = tl.where(n_mask, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m_i - m_new)
        v = tl.load(v_ptr + offsets, mask=kv_mask, other=0.0)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        m_i = m_new
    tl.store(o_ptr + base + row * D + d, acc / l_i, mask=d_mask)


def attention(q, k, v):
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    BH, S, D = q.shape
    out = torch.empty_like(q)
    attention_kernel[(BH, S)](
        q, k, v, out, S, D, 1.0 / D**0.5, BLOCK_N=BLOCK_N, BLOCK_D=triton.next_power_of_2(D)
    )
    return out


# EVOLVE-BLOCK-END


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return attention(q, k, v)
