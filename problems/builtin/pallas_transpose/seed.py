"""Seed for pallas_transpose: one block of rows per grid step, written as a block of columns."""

import jax
from jax.experimental import pallas as pl

# EVOLVE-BLOCK-START
BLOCK_ROWS = 64


def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...].T


def transpose(x):
    rows, cols = x.shape
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((cols, rows), x.dtype),
        grid=(pl.cdiv(rows, BLOCK_ROWS),),
        in_specs=[pl.BlockSpec((BLOCK_ROWS, cols), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((cols, BLOCK_ROWS), lambda i: (0, i)),
        interpret=INTERPRET,  # noqa: F821 - set by the harness
    )(x)


# EVOLVE-BLOCK-END
