"""Row-wise softmax as a Pallas kernel: correct on every row, then as fast as possible on a TPU.

The candidate's ``softmax(x)`` takes a 2-D float32 array and must return ``softmax(x, axis=-1)``
computed by a ``pl.pallas_call(..., interpret=INTERPRET)`` kernel (the harness sets
``INTERPRET``: True without a TPU). Inputs are normal with a large spread (scale 30), so a
kernel that exponentiates without subtracting the row maximum overflows and is rejected.
Row counts that are not multiples of the block size are included: the last block is partial.

Scored against a float64 reference computed outside the candidate's process. On a TPU the
objective is ``speedup`` over ``jax.nn.softmax`` (interleaved timing); without one the run is
correctness-only (``passed = 1`` for every correct kernel; ``max_abs_error`` stays a metric)
and says why (``evoforge run`` prints it).
"""

name = "pallas_softmax"
evaluator = "tpu"
entry = "softmax"
objectives = {"speedup": "maximize"}
timeout_s = 120
memory_mb = 4096
preload: list[str] = []
seed_file = "seed.py"

inputs = [
    [((300, 200), "float32", 30.0)],
    [((129, 1000), "float32", 30.0)],
    [((64, 128), "float32", 1.0)],
]
atol = 1e-6  # softmax values lie in [0, 1]; float32 kernels reach about 1e-7
rtol = 1e-4
options = {"trials": 5}


def reference(x):
    """The plain-jnp softmax the kernel must match (and is timed against on a TPU)."""
    import jax

    return jax.nn.softmax(x, axis=-1)


def evaluate(metrics):
    """The tpu evaluator's metrics are the scores; nothing is derived here."""
    return metrics
