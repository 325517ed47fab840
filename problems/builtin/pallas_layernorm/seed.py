"""Seed for pallas_layernorm: one block of rows per grid step, whole rows in each block."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

EPS = 1e-5

# EVOLVE-BLOCK-START
BLOCK_ROWS = 64


def _kernel(x_ref, w_ref, b_ref, o_ref):
    x = x_ref[...]
    mean = jnp.mean(x, axis=-1, keepdims=True)
    diff = x - mean
    var = jnp.mean(diff * diff, axis=-1, keepdims=True)
    o_ref[...] = diff / jnp.sqrt(var + EPS) * w_ref[...] + b_ref[...]


def layernorm(x, weight, bias):
    rows, cols = x.shape
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(rows, BLOCK_ROWS),),
        in_specs=[
            pl.BlockSpec((BLOCK_ROWS, cols), lambda i: (i, 0)),
            pl.BlockSpec((cols,), lambda i: (0,)),
            pl.BlockSpec((cols,), lambda i: (0,)),
        ],
        out_specs=pl.BlockSpec((BLOCK_ROWS, cols), lambda i: (i, 0)),
        interpret=INTERPRET,  # noqa: F821 - set by the harness
    )(x, weight, bias)


# EVOLVE-BLOCK-END
