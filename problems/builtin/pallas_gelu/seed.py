"""Seed for pallas_gelu: one block of rows per grid step, whole rows in each block."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

# EVOLVE-BLOCK-START
BLOCK_ROWS = 64


def _kernel(x_ref, o_ref):
    x = x_ref[...]
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    o_ref[...] = 0.5 * x * (1.0 + jnp.tanh(u))


def gelu(x):
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
