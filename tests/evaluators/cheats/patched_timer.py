"""Cheat: replaces the clocks and CUDA timing functions, then computes honestly.

With ``time.perf_counter`` frozen and ``Event.elapsed_time`` returning a microsecond, a
harness that times through these reports any speed it likes. Guard: the harness captures
these objects before the candidate's code runs, times only through its captured copies, and
checks after the import and after each call that none was replaced: ``sandbox_violation``
(on CPU the patch is detected the same way, although nothing is timed there).
"""

import time

import torch
import torch.nn as nn

time.perf_counter = lambda: 0.0
torch.cuda.synchronize = lambda *args, **kwargs: None
torch.cuda.Event.elapsed_time = lambda self, end: 0.001


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
