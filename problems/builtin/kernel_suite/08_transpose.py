"""Kernel suite, memory-bound: the transpose of a matrix, as a contiguous tensor."""

import torch
import torch.nn as nn

rows = 8192
cols = 8192
SMALL_SHAPES = [(31, 67), (64, 64), (129, 17), (5, 300)]


class Model(nn.Module):
    """y = x^T, materialised."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.t().contiguous()


def get_inputs():
    return [torch.randn(rows, cols)]


def get_inputs_small(trial=0):
    return [torch.randn(*SMALL_SHAPES[trial % len(SMALL_SHAPES)])]


def get_init_inputs():
    return []
