"""Seed for pallas_softmax: one block of rows per grid step, the whole row in each block."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

# EVOLVE-BLOCK-START
BLOCK_ROWS = 64


def _kernel(x_ref, o_ref):
    x = x_ref[...]
    m = jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(x - m)
    o_ref[...] = e / jnp.sum(e, axis=-1, keepdims=True)


def softmax(x):
    rows, cols = x.shape
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(rows, BLOCK_ROWS),),
        in_specs=[pl.BlockSpec((BLOCK_ROWS, cols), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((BLOCK_ROWS, cols), lambda i: (i, 0)),
        interpret=INTERPRET,  # noqa: F821 - set by the harness
    )(x)


# EVOLVE-BLOCK-END
