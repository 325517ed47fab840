import torch
import torch.nn as nn


class Model(nn.Module):
    """A 3-D convolution then a dilated 3-D max pooling (5-D input, unpacked sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel, dilation):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.pool = nn.MaxPool3d(pool_kernel, stride=2, padding=1, dilation=dilation)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


batch_size = 128
in_channels = 3
out_channels = 64
kernel_size = 3
pool_kernel = 3
dilation = 3
D, H, W = 16, 64, 64


def get_inputs():
    return [torch.rand(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel, dilation]
