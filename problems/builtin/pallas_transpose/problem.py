"""Kernel suite (Pallas), memory-bound: ``transpose(x)`` must return ``x.T`` computed by a
``pl.pallas_call(..., interpret=INTERPRET)`` kernel. The Triton version is ``kernel_suite``'s
``08_transpose``.
"""

name = "pallas_transpose"
evaluator = "tpu"
entry = "transpose"
objectives = {"speedup": "maximize"}
timeout_s = 120
memory_mb = 4096
preload: list[str] = []
seed_file = "seed.py"
inputs = [
    [((300, 200), "float32")],
    [((129, 1000), "float32")],
    [((64, 128), "float32")],
]
atol = 0.0  # a transpose moves values: they must come back exactly
rtol = 0.0
options = {"trials": 5}


def reference(x):
    return x.T


def evaluate(metrics):
    return metrics
