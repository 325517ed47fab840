"""Cheat (GPU): does the work on a side stream and returns before it finishes.

A timer whose events sit on the current stream sees an almost empty stream. Guards: the
output is read on the current stream the moment ``forward`` returns (the side stream, held
back by a sleep here, has not written it yet): ``incorrect``; and every timed call ends with
a device-wide synchronisation before the end event, so side-stream work is timed anyway.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.stream = None

    def forward(self, x):
        if self.stream is None:
            self.stream = torch.cuda.Stream()
        out = torch.empty_like(x)
        self.stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.stream):
            torch.cuda._sleep(50_000_000)  # about 25 ms of spinning before the real work
            out.copy_(torch.softmax(x, dim=-1))
        return out
