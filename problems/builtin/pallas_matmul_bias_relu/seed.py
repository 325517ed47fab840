"""Seed for pallas_matmul_bias_relu: one output tile per grid step; the bias and the ReLU are
applied to the tile before it is written."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

# EVOLVE-BLOCK-START
BLOCK_M = 32
BLOCK_N = 32


def _kernel(x_ref, w_ref, b_ref, o_ref):
    acc = jax.lax.dot_general(
        x_ref[...], w_ref[...], (((1,), (1,)), ((), ())),
        precision=jax.lax.Precision.HIGHEST, preferred_element_type=jnp.float32,
    )
    o_ref[...] = jnp.maximum(acc + b_ref[...], 0.0)


def linear_relu(x, weight, bias):
    m, k = x.shape
    n = weight.shape[0]
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid=(pl.cdiv(m, BLOCK_M), pl.cdiv(n, BLOCK_N)),
        in_specs=[
            pl.BlockSpec((BLOCK_M, k), lambda i, j: (i, 0)),
            pl.BlockSpec((BLOCK_N, k), lambda i, j: (j, 0)),
            pl.BlockSpec((BLOCK_N,), lambda i, j: (j,)),
        ],
        out_specs=pl.BlockSpec((BLOCK_M, BLOCK_N), lambda i, j: (i, j)),
        interpret=INTERPRET,  # noqa: F821 - set by the harness
    )(x, weight, bias)


# EVOLVE-BLOCK-END
