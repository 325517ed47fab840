"""Kernel problems shared by the ``tpu``, ``metal`` and ``trainium`` evaluators: the spec's
declarations (inputs, reference, tolerances), input generation from hidden seeds, comparison.

numpy is imported inside the functions: the controller validates specs without it.
"""

from __future__ import annotations

import hashlib
import math
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evoforge.problems import ProblemSpecError, import_spec

if TYPE_CHECKING:
    from evoforge.problems import Problem

MIN_TRIALS = 5
DEFAULT_TOLERANCE = {"float64": 1e-8, "float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}
"""atol = rtol by output dtype, unless the spec sets them: KernelBench's values for 32 and 16
bits; for float64 (which KernelBench has no value for) well above the rounding of any honest
float64 kernel and far below what a float32 shortcut gives. Every kernel evaluator uses it."""


def read_kernel_config(problem: Problem) -> dict[str, Any]:
    """The spec's kernel declarations (``inputs``, ``reference``, tolerances), validated.

    Raises:
        ProblemSpecError: a missing or malformed declaration, named with its fix.
    """
    path = problem.spec_path
    spec = import_spec(path)
    if not callable(getattr(spec, "reference", None)):
        raise ProblemSpecError(
            path,
            "reference",
            "missing; define `def reference(*inputs)` (jax.numpy for tpu, numpy otherwise)",
        )
    cases = _cases(path, getattr(spec, "inputs", None))
    trials = problem.options.get("trials", MIN_TRIALS)
    if not isinstance(trials, int) or trials < MIN_TRIALS:
        raise ProblemSpecError(
            path, "options['trials']", f"found {trials!r}; use an int of at least {MIN_TRIALS}"
        )
    dtypes = {dtype for case in cases for _, dtype, _ in case}
    loosest = max((DEFAULT_TOLERANCE.get(d, 0.0) for d in dtypes), default=0.0)
    tolerances = {}
    for name in ("atol", "rtol"):
        value = getattr(spec, name, loosest)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise ProblemSpecError(path, name, f"found {value!r}; use a number >= 0")
        tolerances[name] = float(value)
    precision = problem.options.get("reference_precision", "float64")
    if precision not in ("float64", "input"):
        raise ProblemSpecError(
            path, "options['reference_precision']", f"found {precision!r}; use 'float64' or 'input'"
        )
    return {"cases": cases, "trials": trials, "reference_precision": precision, **tolerances}


def _cases(path: Any, declared: Any) -> list[list[tuple[list[int], str, float]]]:
    fix = (
        'declare inputs = [[((300, 200), "float32")], ...]: a list of cases, each a list of '
        "(shape, dtype) or (shape, dtype, scale)"
    )
    if not isinstance(declared, Sequence) or isinstance(declared, str) or not declared:
        raise ProblemSpecError(path, "inputs", f"found {declared!r}; {fix}")
    cases = []
    for case in declared:
        if not isinstance(case, Sequence) or isinstance(case, str) or not case:
            raise ProblemSpecError(path, "inputs", f"case {case!r} is not a list of inputs; {fix}")
        arguments = []
        for item in case:
            ok = isinstance(item, Sequence) and len(item) in (2, 3)
            shape, dtype = (item[0], item[1]) if ok else ((), "")
            scale = item[2] if ok and len(item) == 3 else 1.0
            if not (
                ok
                and isinstance(shape, Sequence)
                and all(isinstance(n, int) and n > 0 for n in shape)
                and isinstance(dtype, str)
                and isinstance(scale, int | float)
                and math.isfinite(scale)
            ):
                raise ProblemSpecError(path, "inputs", f"bad input {item!r}; {fix}")
            arguments.append((list(shape), dtype, float(scale)))
        cases.append(arguments)
    if all(n & (n - 1) == 0 for case in cases for shape, _, _ in case for n in shape):
        raise ProblemSpecError(
            path,
            "inputs",
            "every dimension is a power of two; add a case with an odd size (e.g. 300) so "
            "kernels that assume aligned sizes are caught",
        )
    return cases


# --- inputs and comparison (runner side) ---------------------------------------------------


def make_inputs(cases: list[Any], count: int) -> list[tuple[int, list[Any]]]:
    """``count`` trials cycling through the cases, each from a fresh secret seed."""
    import numpy as np

    trials = []
    for trial in range(count):
        index = trial % len(cases)
        rng = np.random.default_rng(secrets.randbits(64))  # the seed is not kept anywhere
        arrays = []
        for shape, dtype, scale in cases[index]:
            kind = np.dtype(dtype) if dtype != "bfloat16" else None
            if kind is not None and np.issubdtype(kind, np.integer):
                info = np.iinfo(kind)
                high = min(int(scale * 100) or 1, info.max)
                low = max(-high, info.min)
                arrays.append(rng.integers(low, high, size=shape, dtype=kind, endpoint=True))
            else:
                values = rng.standard_normal(size=shape) * scale
                arrays.append(_cast(values, dtype))
        trials.append((index, arrays))
    return trials


def _cast(values: Any, dtype: str) -> Any:
    if dtype == "bfloat16":
        import ml_dtypes  # ships with jax

        return values.astype(ml_dtypes.bfloat16)
    return values.astype(dtype)


def digest(array: Any) -> str:
    """A hash of ``array``'s bytes: a changed digest shows a kernel wrote to its input."""
    import numpy as np

    return hashlib.blake2b(np.ascontiguousarray(array).tobytes(), digest_size=16).hexdigest()


def compare_arrays(got: Any, want: Any, atol: float, rtol: float) -> tuple[float, float, str]:
    """Largest absolute error, largest error / tolerance, and what failed ("" when none)."""
    import numpy as np

    g = got.astype(np.float64) if got.dtype.kind in "fiub" or got.dtype.name == "bfloat16" else got
    w = np.asarray(want, dtype=np.float64)
    if g.size == 0:
        return 0.0, 0.0, ""
    same_nan = np.isnan(g) == np.isnan(w)
    if not same_nan.all():
        index = np.unravel_index(int(np.argmin(same_nan)), g.shape)
        return (
            float("inf"),
            float("inf"),
            f"NaN mismatch at {at(index)}: got {g[index]}, expected {w[index]}",
        )
    finite = np.isfinite(w) & np.isfinite(g)
    same_inf = (g == w) | finite | np.isnan(w)
    if not same_inf.all():
        index = np.unravel_index(int(np.argmin(same_inf)), g.shape)
        return (
            float("inf"),
            float("inf"),
            f"infinity mismatch at {at(index)}: got {g[index]}, expected {w[index]}",
        )
    error = np.where(finite, np.abs(g - w), 0.0)
    allowed = atol + rtol * np.abs(np.where(finite, w, 0.0))
    ratio = np.divide(error, allowed, out=np.where(error > 0, np.inf, 0.0), where=allowed > 0)
    worst = np.unravel_index(int(np.argmax(ratio)), g.shape)
    detail = ""
    if ratio[worst] > 1.0:
        detail = (
            f"element {at(worst)}: got {g[worst]:.9g}, expected {w[worst]:.9g} "
            f"(|error| {error[worst]:.3g} > atol {atol:g} + rtol {rtol:g} * |expected|)"
        )
    return float(error.max()), float(ratio[worst]), detail


def at(index: tuple[Any, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in index)


def numpy_reference(
    reference: Any, arrays: Sequence[Any], precision: str
) -> tuple[list[tuple[tuple[int, ...], Any]], list[Any]]:
    """A numpy ``reference``'s outputs: ``(shape, dtype)`` of each at the inputs' precision,
    and their values (computed from float64 copies of float inputs when ``precision`` is
    ``"float64"``)."""
    import numpy as np

    def leaves(value: Any) -> list[Any]:
        return [np.asarray(v) for v in (value if isinstance(value, tuple | list) else (value,))]

    plain = leaves(reference(*(np.array(a) for a in arrays)))
    structure = [(v.shape, v.dtype) for v in plain]
    if precision != "float64":
        return structure, plain
    wide = [a.astype(np.float64) if a.dtype.kind == "f" else np.array(a) for a in arrays]
    return structure, leaves(reference(*wide))
