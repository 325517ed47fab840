"""Cheat: computes nothing and returns ``torch.empty`` (uninitialised memory).

With the reference run first in the same process, freed memory often still held the reference
output, so this "passed". Guard: the reference runs in another process, after this one
exited, and values are compared outside; uninitialised memory does not match.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.empty(x.shape, dtype=x.dtype, device=x.device)
