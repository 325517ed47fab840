"""Kernel suite (Pallas), elementwise: GELU, tanh approximation, of a float32 matrix.

The candidate's ``gelu(x)`` must return ``jax.nn.gelu(x, approximate=True)`` computed by a
``pl.pallas_call(..., interpret=INTERPRET)`` kernel. Checked against a float64 reference on
hidden inputs (odd sizes included); timed against the plain-jnp reference on a TPU. Without
one, the run is correctness-only. The Triton version of the task is ``kernel_suite``'s
``01_gelu``.
"""

name = "pallas_gelu"
evaluator = "tpu"
entry = "gelu"
objectives = {"speedup": "maximize"}
timeout_s = 120
memory_mb = 4096
preload: list[str] = []
seed_file = "seed.py"
inputs = [
    [((300, 200), "float32", 3.0)],
    [((129, 1000), "float32", 3.0)],
    [((64, 128), "float32", 1.0)],
]
options = {"trials": 5}


def reference(x):
    import jax

    return jax.nn.gelu(x, approximate=True)


def evaluate(metrics):
    return metrics
