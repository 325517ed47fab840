"""Seed for pallas_attention: one batch-head per grid step, the whole sequence in the block."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

# EVOLVE-BLOCK-START
def _kernel(q_ref, k_ref, v_ref, o_ref):
    q, k, v = q_ref[0], k_ref[0], v_ref[0]
    scores = jax.lax.dot_general(
        q, k, (((1,), (1,)), ((), ())), precision=jax.lax.Precision.HIGHEST
    ) / jnp.sqrt(jnp.float32(q.shape[-1]))
    scores = scores - jnp.max(scores, axis=-1, keepdims=True)
    p = jnp.exp(scores)
    p = p / jnp.sum(p, axis=-1, keepdims=True)
    o_ref[0] = jnp.dot(p, v, precision=jax.lax.Precision.HIGHEST)


def attention(q, k, v):
    bh, s, d = q.shape
    spec = pl.BlockSpec((1, s, d), lambda i: (i, 0, 0))
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype),
        grid=(bh,),
        in_specs=[spec, spec, spec],
        out_specs=spec,
        interpret=INTERPRET,  # noqa: F821 - set by the harness
    )(q, k, v)


# EVOLVE-BLOCK-END
