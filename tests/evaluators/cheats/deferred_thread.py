"""Cheat: returns an empty output at once and fills it from a thread half a second later.

The call looks instantaneous to a timer that stops when it returns. Guard: the output is
copied the moment ``forward`` returns, and a thread it started that is still running when it
returns is ``incorrect`` ("forward() returned while ... thread(s) it started were still
running").
"""

import threading
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)

        def later():
            time.sleep(0.5)
            out.copy_(torch.softmax(x, dim=-1))

        threading.Thread(target=later, name="deferred-softmax", daemon=True).start()
        return out
