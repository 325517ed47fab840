"""Kernel suite (Pallas), reduction: layer normalisation of each row, with weight and bias.

``layernorm(x, weight, bias)`` must return ``(x - mean) / sqrt(var + 1e-5) * weight + bias``
per row, computed by a ``pl.pallas_call(..., interpret=INTERPRET)`` kernel. The Triton version
is ``kernel_suite``'s ``03_layernorm``.
"""

name = "pallas_layernorm"
evaluator = "tpu"
entry = "layernorm"
objectives = {"speedup": "maximize"}
timeout_s = 120
memory_mb = 4096
preload: list[str] = []
seed_file = "seed.py"
inputs = [
    [((300, 200), "float32", 2.0), ((200,), "float32"), ((200,), "float32")],
    [((129, 1000), "float32", 2.0), ((1000,), "float32"), ((1000,), "float32")],
    [((64, 128), "float32", 1.0), ((128,), "float32"), ((128,), "float32")],
]
options = {"trials": 5}
EPS = 1e-5


def reference(x, weight, bias):
    import jax.numpy as jnp

    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + EPS) * weight + bias


def evaluate(metrics):
    return metrics
