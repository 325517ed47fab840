"""Naive Triton seed for the kernel suite's linear + bias + ReLU: a tiled matmul whose epilogue adds
the bias and applies ReLU before the one store (full float32 precision, no TF32)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_M = 32
BLOCK_N = 32
BLOCK_K = 32


@triton.jit
def linear_relu_kernel(
    a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + rk
        a = tl.load(
            a_ptr + rm[:, None] * stride_am + k[None, :] * stride_ak,
            mask=(rm[:, None] < M) & (k[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + k[:, None] * stride_bk + rn[None, :] * stride_bn,
            mask=(k[:, None] < K) & (rn[None, :] < N),
            other=0.0,
        )
        acc += tl.dot(a, b, input_precision="ieee")
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc, mask=mask)


def linear_relu(x, weight, bias):
    M, K = x.shape
    N = weight.shape[0]
    c = torch.empty((M, N), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    # B = weight^T: element (k, n) is weight[n, k], so B's strides are weight's, swapped.
    linear_relu_kernel[grid](
        x, weight, bias, c, M, N, K,
        x.stride(0), x.stride(1), weight.stride(1), weight.stride(0), c.stride(0), c.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return c


# EVOLVE-BLOCK-END


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, weight, bias):
        return linear_relu(x, weight, bias.contiguous())
