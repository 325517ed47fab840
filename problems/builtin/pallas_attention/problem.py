"""Kernel suite (Pallas), attention-style fused op: ``attention(q, k, v)`` must return
``softmax(q k^T / sqrt(d)) v`` for each batch-head (inputs of shape (batch_heads, seq, d)),
computed by a ``pl.pallas_call(..., interpret=INTERPRET)`` kernel. The Triton version is
``kernel_suite``'s ``07_attention``.
"""

name = "pallas_attention"
evaluator = "tpu"
entry = "attention"
objectives = {"speedup": "maximize"}
timeout_s = 120
memory_mb = 4096
preload: list[str] = []
seed_file = "seed.py"
inputs = [
    [((3, 17, 16), "float32"), ((3, 17, 16), "float32"), ((3, 17, 16), "float32")],
    [((2, 33, 32), "float32"), ((2, 33, 32), "float32"), ((2, 33, 32), "float32")],
    [((4, 64, 64), "float32"), ((4, 64, 64), "float32"), ((4, 64, 64), "float32")],
]
options = {"trials": 5}


def reference(q, k, v):
    import jax
    import jax.numpy as jnp

    scores = jnp.einsum("bsd,btd->bst", q, k) / jnp.sqrt(q.shape[-1])
    return jnp.einsum("bst,btd->bsd", jax.nn.softmax(scores, axis=-1), v)


def evaluate(metrics):
    return metrics
