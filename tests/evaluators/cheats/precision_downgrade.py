"""Cheat: computes the float32 task in float16 and widens the result back to float32.

Half precision is much faster on tensor cores and halves memory traffic. Guard: besides the
elementwise tolerance, the first trial is compared with a float64 evaluation of the
reference; an error far above what float32 arithmetic gives (normwise, relative to the
largest value) is ``incorrect`` ("precision below float32").
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x.half().float(), dim=-1).half().float()
