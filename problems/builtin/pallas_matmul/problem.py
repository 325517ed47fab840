"""Kernel suite (Pallas), matmul: ``matmul(a, b)`` must return ``a @ b`` (float32 inputs, full
float32 precision) computed by a ``pl.pallas_call(..., interpret=INTERPRET)`` kernel. The
Triton version is ``kernel_suite``'s ``05_matmul``.
"""

name = "pallas_matmul"
evaluator = "tpu"
entry = "matmul"
objectives = {"speedup": "maximize"}
timeout_s = 120
memory_mb = 4096
preload: list[str] = []
seed_file = "seed.py"
inputs = [
    [((96, 200), "float32"), ((200, 72), "float32")],
    [((130, 64), "float32"), ((64, 100), "float32")],
    [((64, 128), "float32"), ((128, 64), "float32")],
]
options = {"trials": 5}


def reference(a, b):
    return a @ b


def evaluate(metrics):
    return metrics
