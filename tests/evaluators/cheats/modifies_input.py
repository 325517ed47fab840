"""Cheat: writes the result into its input and returns the input.

In KernelBench's original harness the candidate ran before the reference on the same tensors,
so the reference then saw modified inputs. Guard: the runner fingerprints every input before
the call and the candidate's process reports the fingerprint after it; any change is
``incorrect`` ("modified its input").
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        x.copy_(torch.softmax(x, dim=-1))
        return x
