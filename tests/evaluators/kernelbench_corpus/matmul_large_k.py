import torch
import torch.nn as nn


class Model(nn.Module):
    """A matmul whose reduction dimension is written as an expression."""

    def forward(self, a, b):
        return a @ b


M = 256
N = 256
K = 131072 * 4


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
