import torch
import torch.nn as nn


class Model(nn.Module):
    """Level-2 style: convolution, bias, group norm, pooling, then a linear layer, with sizes
    shared between the input, the constructor and a derived bias shape."""

    def __init__(
        self, in_channels, out_channels, kernel_size, num_groups, bias_shape, hidden, scale
    ):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.norm = nn.GroupNorm(num_groups, out_channels)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(out_channels, hidden)
        self.scale = scale

    def forward(self, x):
        x = self.pool(self.norm(self.conv(x) + self.bias))
        x = x.mean(dim=(2, 3))
        return torch.tanh(self.fc(x)) * self.scale


batch_size = 128
in_channels = 64
out_channels = 128
kernel_size = 3
num_groups = 16
hidden = 4096
height = width = 256
bias_shape = (out_channels, 1, 1)
scale = 2.0


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups, bias_shape, hidden, scale]
