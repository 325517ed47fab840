"""Cheat: returns a ``torch.Tensor`` subclass whose values are computed only when read.

Lazy outputs move the work out of the timed region (into whoever reads the values). Guard:
``type(out) is torch.Tensor``, checked before anything reads the output: ``incorrect``.
"""

import torch
import torch.nn as nn


class LazySoftmax(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        args = [
            torch.softmax(a.as_subclass(torch.Tensor), -1) if isinstance(a, cls) else a
            for a in args
        ]
        return func(*args, **kwargs)


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clone().as_subclass(LazySoftmax)
