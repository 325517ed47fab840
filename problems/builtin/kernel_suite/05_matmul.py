"""Kernel suite, matmul: C = A @ B in float32 (the full precision of float32, no TF32)."""

import torch
import torch.nn as nn

M = 4096
K = 4096
N = 4096
SMALL_SHAPES = [(31, 67, 45), (64, 64, 64), (17, 129, 33), (50, 40, 70)]


class Model(nn.Module):
    """C = A @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_inputs_small(trial=0):
    m, k, n = SMALL_SHAPES[trial % len(SMALL_SHAPES)]
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
