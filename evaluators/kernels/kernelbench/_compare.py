"""Judging a kernel's outputs against the reference, in the trusted runner (numpy only).

Outputs travel as raw bytes plus a small description (shape, dtype, where in the payload);
nothing is unpickled. bfloat16 travels widened to float32 (exactly), since numpy has no
bfloat16. The rules, per trial and output:

- same number of outputs, same shape, same dtype, same device type as the reference;
- finite wherever the reference is finite; where the reference is not finite, the same value
  (NaN where NaN, the same infinity);
- ``|out - ref| <= atol + rtol * |ref|`` everywhere else (KernelBench: 1e-4 for float32, 1e-2
  for float16 and bfloat16);
- precision: on the first trial, the error against a float64 evaluation of the reference,
  relative to the largest reference value, must stay within ``max(floor, 16 x the task's own
  reference error)``. This catches a float32 task computed in float16 or bfloat16, which the
  loose elementwise tolerance can let through when the values are small.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from evoforge.evaluators.kernels import DEFAULT_TOLERANCE

PRECISION_FLOOR = {"float64": 1e-12, "float32": 1e-5, "float16": 4e-3, "bfloat16": 3e-2}
"""Largest normwise error against float64 always allowed, by output dtype."""
PRECISION_FACTOR = 16.0
"""A kernel may be this many times less precise than the task's own reference, no more."""
WIRE_DTYPES = frozenset(
    {"float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"}
)


class MalformedOutput(ValueError):
    """An output description does not match its bytes (tampering, or a harness bug)."""


def decode(meta: Mapping[str, Any], payload: bytes | memoryview) -> np.ndarray:
    """The array an output description points at in ``payload`` (a read-only view)."""
    wire = meta.get("wire")
    shape = meta.get("shape")
    offset, nbytes = meta.get("offset"), meta.get("nbytes")
    if wire not in WIRE_DTYPES or not isinstance(shape, list):
        raise MalformedOutput(f"output description {dict(meta)!r} names no known layout")
    sizes = [*shape, offset, nbytes]
    if not all(isinstance(n, int) and n >= 0 for n in sizes) or not isinstance(offset, int):
        raise MalformedOutput(f"output description {dict(meta)!r} has bad sizes")
    dtype = np.dtype(wire)
    if math.prod(shape) * dtype.itemsize != nbytes or offset + nbytes > len(payload):
        raise MalformedOutput(
            f"output description {dict(meta)!r} does not fit the {len(payload)}-byte payload"
        )
    return np.frombuffer(payload, dtype=dtype, count=math.prod(shape), offset=offset).reshape(shape)


def tolerances(dtype: str, atol: float | None, rtol: float | None) -> tuple[float, float]:
    """``(atol, rtol)`` for outputs of ``dtype``: the declared ones, else the defaults."""
    default = DEFAULT_TOLERANCE.get(dtype, 0.0)
    return (default if atol is None else atol), (default if rtol is None else rtol)


def compare_outputs(
    trial: int,
    expected: Sequence[Mapping[str, Any]],
    expected_payload: bytes,
    got: Sequence[Mapping[str, Any]],
    got_payload: bytes,
    *,
    atol: float | None = None,
    rtol: float | None = None,
) -> tuple[str, float]:
    """``(why the outputs of one trial are wrong or "", largest absolute error)``."""
    if len(got) != len(expected):
        return (
            f"trial {trial}: forward() returned {len(got)} tensor(s); the reference returns "
            f"{len(expected)}",
            math.inf,
        )
    worst = 0.0
    for index, (want, have) in enumerate(zip(expected, got, strict=True)):
        where = f"trial {trial}, output {index}"
        for field in ("shape", "dtype", "device"):
            if have.get(field) != want.get(field):
                return (
                    f"{where}: {field} is {have.get(field)!r}; expected {want.get(field)!r}",
                    math.inf,
                )
        ref = decode(want, expected_payload)
        out = decode(have, got_payload)
        a, r = tolerances(str(want["dtype"]), atol, rtol)
        why, error = _compare(ref, out, a, r)
        if why:
            return f"{where} (shape {tuple(ref.shape)}): {why}", error
        worst = max(worst, error)
    return "", worst


def _compare(ref: np.ndarray, out: np.ndarray, atol: float, rtol: float) -> tuple[str, float]:
    if ref.dtype == np.bool_ or out.dtype == np.bool_:
        wrong = ref != out
        if wrong.any():
            return f"{int(wrong.sum())} of {ref.size} values differ", math.inf
        return "", 0.0
    ref64, out64 = ref.astype(np.float64), out.astype(np.float64)
    finite = np.isfinite(ref64)
    broken = finite & ~np.isfinite(out64)
    if broken.any():
        index = _first(broken)
        return (
            f"{int(broken.sum())} values are NaN or infinite where the reference is finite "
            f"(first at {index}: got {float(out64[index])}, expected {float(ref64[index])})",
            math.inf,
        )
    special = ~finite
    if special.any():
        same = (np.isnan(ref64) & np.isnan(out64)) | (ref64 == out64)
        differ = special & ~same
        if differ.any():
            index = _first(differ)
            return (
                f"{int(differ.sum())} values differ where the reference is NaN or infinite "
                f"(first at {index}: got {float(out64[index])}, expected {float(ref64[index])})",
                math.inf,
            )
    error = np.zeros_like(ref64)
    np.subtract(out64, ref64, out=error, where=finite)
    np.abs(error, out=error)
    largest = float(error.max()) if error.size else 0.0
    bad = error > atol + rtol * np.abs(np.where(finite, ref64, 0.0))
    if bad.any():
        index = _first(error == largest) if largest > 0 else _first(bad)
        return (
            f"{int(bad.sum())} of {ref.size} values differ beyond atol={atol:g} rtol={rtol:g}; "
            f"largest error {largest:.3e} at {index} (got {float(out64[index]):.6g}, expected "
            f"{float(ref64[index]):.6g})",
            largest,
        )
    return "", largest


def precision_check(
    reference: np.ndarray,
    reference64: np.ndarray,
    output: np.ndarray,
    dtype: str,
    floor: float | None,
) -> tuple[str, dict[str, float]]:
    """Whether ``output`` is as precise as its dtype: ``(why not or "", measurements)``.

    Errors are normwise: the largest absolute difference from the float64 evaluation divided
    by the largest magnitude in it, over the positions where it is finite.
    """
    truth = reference64.astype(np.float64)
    finite = np.isfinite(truth)
    if not finite.any():
        return "", {}
    scale = float(np.abs(truth[finite]).max()) or 1.0
    ref_error = float(np.abs(reference.astype(np.float64)[finite] - truth[finite]).max()) / scale
    out_error = float(np.abs(output.astype(np.float64)[finite] - truth[finite]).max()) / scale
    allowed = max(PRECISION_FLOOR.get(dtype, 0.0) if floor is None else floor, 0.0)
    allowed = max(allowed, PRECISION_FACTOR * ref_error)
    measured = {
        "relative_error_vs_float64": out_error,
        "reference_relative_error_vs_float64": ref_error,
    }
    if out_error > allowed:
        return (
            f"precision below {dtype}: error {out_error:.2e} relative to the largest value, "
            f"measured against a float64 evaluation of the reference (allowed {allowed:.1e}; "
            f"the task's own {dtype} reference has {ref_error:.1e}); compute in {dtype}, "
            "not in a narrower type",
            measured,
        )
    return "", measured


def _first(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), mask.shape))
