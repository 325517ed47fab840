import torch
import torch.nn as nn


class Model(nn.Module):
    """A loss whose two inputs broadcast only while two separately written sizes are equal."""

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


batch_size = 32768
input_shape = (32768,)


def get_inputs():
    targets = torch.randint(0, 2, (batch_size,)).float() * 2 - 1
    return [torch.rand(batch_size, *input_shape), targets]


def get_init_inputs():
    return []
