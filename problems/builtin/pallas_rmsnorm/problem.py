"""Kernel suite (Pallas), reduction: RMS normalisation of each row, with a weight.

``rmsnorm(x, weight)`` must return ``x / sqrt(mean(x^2) + 1e-6) * weight`` per row, computed by
a ``pl.pallas_call(..., interpret=INTERPRET)`` kernel. The Triton version is ``kernel_suite``'s
``04_rmsnorm``.
"""

name = "pallas_rmsnorm"
evaluator = "tpu"
entry = "rmsnorm"
objectives = {"speedup": "maximize"}
timeout_s = 120
memory_mb = 4096
preload: list[str] = []
seed_file = "seed.py"
inputs = [
    [((300, 200), "float32", 2.0), ((200,), "float32")],
    [((129, 1000), "float32", 2.0), ((1000,), "float32")],
    [((64, 128), "float32", 1.0), ((128,), "float32")],
]
options = {"trials": 5}
EPS = 1e-6


def reference(x, weight):
    import jax.numpy as jnp

    return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + EPS) * weight


def evaluate(metrics):
    return metrics
