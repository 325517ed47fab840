"""Kernel suite (Pallas), matmul with a fused epilogue: ``linear_relu(x, weight, bias)`` must
return ``relu(x @ weight.T + bias)`` (weight of shape (out, in)), computed by a
``pl.pallas_call(..., interpret=INTERPRET)`` kernel. The Triton version is ``kernel_suite``'s
``06_linear_bias_relu``.
"""

name = "pallas_matmul_bias_relu"
evaluator = "tpu"
entry = "linear_relu"
objectives = {"speedup": "maximize"}
timeout_s = 120
memory_mb = 4096
preload: list[str] = []
seed_file = "seed.py"
inputs = [
    [((96, 200), "float32"), ((72, 200), "float32", 0.1), ((72,), "float32")],
    [((130, 64), "float32"), ((100, 64), "float32", 0.1), ((100,), "float32")],
    [((64, 128), "float32"), ((64, 128), "float32", 0.1), ((64,), "float32")],
]
options = {"trials": 5}


def reference(x, weight, bias):
    import jax.numpy as jnp

    return jnp.maximum(x @ weight.T + bias, 0.0)


def evaluate(metrics):
    return metrics
