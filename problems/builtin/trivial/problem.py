"""Engine-overhead benchmark: return two numbers as close as possible to (3.7, -1.2).

The candidate's ``main()`` takes no arguments and returns ``[a, b]`` (a list or tuple of two
finite numbers). Score: ``-((a - 3.7)**2 + (b + 1.2)**2)``, maximised; the optimum is 0. There is
nothing to compute, so a run of this problem measures the engine itself: proposal, sandbox,
transport and archive.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Sequence
from typing import Any

name = "trivial"
objectives = {"score": "maximize"}
descriptors = {"a": (-10.0, 10.0, 10), "b": (-10.0, 10.0, 10)}
evaluator = "python"
entry = "main"
timeout_s = 5
memory_mb = 512
preload: list[str] = []
seed_file = "seed.py"

TARGET = (3.7, -1.2)
_SHORT = reprlib.Repr()  # keyword arguments need Python 3.12
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother = 2, 40, 40


def evaluate(output: Any) -> dict:
    """Score ``[a, b]``; never raises, whatever ``output`` is."""
    try:
        return _evaluate(output)
    except Exception as exc:  # a bug here must not crash the engine; report it as a failure
        return _invalid(f"internal evaluator error on this output: {type(exc).__name__}: {exc}")


def _evaluate(output: Any) -> dict:
    output = _plain(output)
    if not isinstance(output, Sequence) or isinstance(output, (str, bytes)) or len(output) != 2:
        return _invalid(f"expected [a, b], two numbers; got {_kind(output)}")
    values = []
    for label, value in zip("ab", output, strict=True):
        value = _plain(value)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return _invalid(f"{label} must be a number, got {_kind(value)}")
        try:
            value = float(value)
        except (OverflowError, ValueError, TypeError):
            return _invalid(f"{label} is too large to be a float")
        if not math.isfinite(value):
            return _invalid(f"{label} is not finite ({value})")
        values.append(value)
    a, b = values
    da, db = a - TARGET[0], b - TARGET[1]
    score = 0.0 - (da * da + db * db)  # x * x overflows to inf (** raises); 0.0 - : no -0.0
    if not math.isfinite(score):
        return _invalid(f"a = {a:g}, b = {b:g} are so large that the score overflows")
    return {"correct": True, "score": score, "a": a, "b": b}


def _plain(value: Any) -> Any:
    """numpy arrays and scalars as Python lists and numbers (what the JSON transport gives)."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return value.tolist()
    return value


def _kind(value: Any) -> str:
    """A short description of a hostile value (bounded size and depth: never huge, never deep)."""
    if isinstance(value, (list, tuple, dict)):
        return f"a {type(value).__name__} of length {len(value)}"
    return f"{type(value).__name__} {_SHORT.repr(value)}"


def _invalid(error: str) -> dict:
    # No score, a or b: an invalid answer must never be ranked or binned (0 is the optimum here).
    return {"correct": False, "error": error}
