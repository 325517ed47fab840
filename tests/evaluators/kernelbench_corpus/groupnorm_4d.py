import torch
import torch.nn as nn


class Model(nn.Module):
    """Group normalisation of a 4-D input: the group count must keep dividing the features."""

    def __init__(self, features, num_groups):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups=num_groups, num_channels=features)

    def forward(self, x):
        return self.norm(x)


batch_size = 112
features = 64
num_groups = 8
dim1 = 512
dim2 = 512


def get_inputs():
    return [torch.rand(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features, num_groups]
