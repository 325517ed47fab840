import torch
import torch.nn as nn


class Model(nn.Module):
    """A dilated, strided 1-D convolution: the length must cover the dilated kernel."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, dilation):
        super().__init__()
        self.conv = nn.Conv1d(
            in_channels, out_channels, kernel_size, stride=stride, dilation=dilation
        )

    def forward(self, x):
        return self.conv(x)


batch_size = 64
in_channels = 64
out_channels = 128
kernel_size = 5
stride = 3
dilation = 9
length = 131072


def get_inputs():
    return [torch.rand(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, dilation]
