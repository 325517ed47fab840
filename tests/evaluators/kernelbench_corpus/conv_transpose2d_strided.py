import torch
import torch.nn as nn


class Model(nn.Module):
    """A grouped, strided, padded transposed convolution with output padding and an
    asymmetric kernel; a chained size assignment."""

    def __init__(
        self, in_channels, out_channels, kernel_size, stride, padding, output_padding, groups
    ):
        super().__init__()
        self.conv = nn.ConvTranspose2d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
            groups=groups,
        )

    def forward(self, x):
        return self.conv(x)


batch_size = 16
in_channels = 32
out_channels = 64
kernel_size = (3, 5)
stride = (2, 3)
padding = (1, 2)
output_padding = (1, 2)
groups = 4
height = width = 128


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, groups]
