"""Kernel suite, memory-bound: gather rows of a table by index (an embedding lookup)."""

import torch
import torch.nn as nn

num_rows = 65536
dim = 1024
num_indices = 32768
SMALL_SHAPES = [(100, 33, 57), (64, 128, 16), (300, 17, 200), (7, 64, 31)]


class Model(nn.Module):
    """y[i] = table[index[i]]."""

    def __init__(self):
        super().__init__()

    def forward(self, table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return table[index]


def _inputs(n_rows, d, n_index):
    return [torch.randn(n_rows, d), torch.randint(0, n_rows, (n_index,))]


def get_inputs():
    return _inputs(num_rows, dim, num_indices)


def get_inputs_small(trial=0):
    return _inputs(*SMALL_SHAPES[trial % len(SMALL_SHAPES)])


def get_init_inputs():
    return []
