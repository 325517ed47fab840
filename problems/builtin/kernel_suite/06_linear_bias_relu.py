"""Kernel suite, matmul with a fused epilogue: y = relu(x @ weight^T + bias)."""

import torch
import torch.nn as nn

batch_size = 4096
in_features = 4096
out_features = 4096
SMALL_SHAPES = [(31, 67, 45), (64, 64, 64), (17, 129, 33), (50, 40, 70)]


class Model(nn.Module):
    """A linear layer (weight and bias given as inputs) followed by ReLU."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.nn.functional.linear(x, weight, bias))


def _inputs(rows, k, n):
    return [torch.randn(rows, k), torch.randn(n, k) / k**0.5, torch.randn(n)]


def get_inputs():
    return _inputs(batch_size, in_features, out_features)


def get_inputs_small(trial=0):
    return _inputs(*SMALL_SHAPES[trial % len(SMALL_SHAPES)])


def get_init_inputs():
    return []
