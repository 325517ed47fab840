"""Kernel suite, elementwise: GELU (tanh approximation) of a float32 matrix.

get_inputs() gives the GPU shape; get_inputs_small(trial) the CI shapes for the Triton
interpreter (odd sizes, so a kernel that assumes aligned lengths is caught).
"""

import torch
import torch.nn as nn

batch_size = 4096
dim = 16384
SMALL_SHAPES = [(7, 1023), (16, 257), (3, 4097), (33, 129)]


class Model(nn.Module):
    """y = gelu(x), tanh approximation."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, dim) * 3]


def get_inputs_small(trial=0):
    rows, cols = SMALL_SHAPES[trial % len(SMALL_SHAPES)]
    return [torch.randn(rows, cols) * 3]


def get_init_inputs():
    return []
