import torch
import torch.nn as nn


class Model(nn.Module):
    """Layer widths written inside the model (not sizes the rule may change): its parameters
    stay over the budget however small the input, and it still runs."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(224, 2048), nn.ReLU(), nn.Linear(2048, 10))

    def forward(self, x):
        return self.net(x.flatten(1))


batch_size = 4096
input_shape = (batch_size, 224)


def get_inputs():
    return [torch.rand(input_shape)]


def get_init_inputs():
    return []
