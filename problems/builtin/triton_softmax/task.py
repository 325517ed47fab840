"""KernelBench task: row-wise softmax of a (batch, dim) float32 matrix.

The reference (``Model``) is ``torch.softmax(x, dim=-1)``. ``get_inputs()`` gives the full
shape timed on a GPU (4096 x 4093: the row length is not a power of two, so a kernel that
assumes aligned rows is caught); ``get_inputs_small(trial)`` gives reduced shapes for the
Triton interpreter on CPU, cycling through ``SMALL_SHAPES`` (mostly not powers of two); with
5 trials the first shape comes twice with different values, so an output cached by shape is
caught.
Inputs are scaled by 4 so rows have clear peaks: values near 1 make precision loss visible.
"""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 4093
SMALL_SHAPES = [(13, 77), (8, 256), (3, 4093), (31, 129)]  # 5 trials: the first repeats
SCALE = 4.0


class Model(nn.Module):
    """Softmax over the last dimension."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, DIM) * SCALE]


def get_inputs_small(trial=0):
    rows, cols = SMALL_SHAPES[trial % len(SMALL_SHAPES)]
    return [torch.randn(rows, cols) * SCALE]


def get_init_inputs():
    return []
