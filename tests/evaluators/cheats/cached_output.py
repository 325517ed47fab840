"""Cheat: caches the output by input shape and returns the cached tensor on a repeat.

Pays off when a harness times or checks the same shape repeatedly. Guard: every trial has
fresh values from a hidden seed, and shapes repeat across trials (the small shapes cycle; on
a GPU every trial has the full shape), so a cached output meets different inputs; while being
timed, every call's output is compared with the reference's on the same fresh inputs.
"""

import torch
import torch.nn as nn

_cache = {}


class ModelNew(nn.Module):
    def forward(self, x):
        key = (tuple(x.shape), x.dtype)
        if key not in _cache:
            _cache[key] = torch.softmax(x, dim=-1)
        return _cache[key]
