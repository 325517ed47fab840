"""Circle packing in the unit square: the strict check every packing problem uses.

A packing is ``{"centers": [[x, y], ...], "radii": [r, ...]}`` with exactly ``n`` of each (lists
or numpy arrays). Validation is strict, with one fixed tolerance ``TOL = 1e-9`` and no
rescaling or repair: every number finite, every radius >= 0, every circle inside the square
(``x - r >= -TOL`` and ``x + r <= 1 + TOL``, the same for ``y``) and no two circles overlapping
(``distance >= r_i + r_j - TOL``). Anything else is rejected with no score and an error that
names the circles and the amount, e.g. "circles 3 and 7 overlap by 1.200e-03".

Metrics: ``sum_radii`` (the objective), ``n_valid`` (circles with no violation of their own),
``radius_cv`` (std/mean of the radii) and ``border_fraction`` (share of circles within
``BORDER_GAP`` of a side).

Published packings have failed loose validators; this one never rounds in anyone's favour.
"""

from __future__ import annotations

import itertools
import math
import numbers
import reprlib
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

TOL = 1e-9
BORDER_GAP = 1e-3
_SIDES = ("left", "bottom", "right", "top")
_SHORT = reprlib.Repr()  # keyword arguments need Python 3.12
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother = 2, 40, 40


def check_circle_packing(output: Any, n: int, *, tol: float = TOL) -> dict:
    """Check a packing of ``n`` circles strictly and score it; never raises, whatever
    ``output`` is (see the module docstring for the rules and the metrics).

    Costs O(n^2) distance checks: well under a millisecond for n = 32.
    """
    try:
        return _evaluate(output, n, tol)
    except Exception as exc:  # a bug here must not crash the engine; report it as a failure
        return _invalid(f"internal evaluator error on this output: {type(exc).__name__}: {exc}")


def _evaluate(output: Any, n: int, tol: float) -> dict:
    if not isinstance(output, Mapping):
        return _invalid(
            f'expected a dict {{"centers": [[x, y], ...], "radii": [r, ...]}}, got {_kind(output)}'
        )
    missing = [key for key in ("centers", "radii") if key not in output]
    if missing:
        keys = ", ".join(_SHORT.repr(k) for k in itertools.islice(output, 5))
        return _invalid(
            f"dict is missing {' and '.join(repr(k) for k in missing)} (has {keys or 'no keys'})"
        )
    centers, error = _rows(output["centers"], "centers", width=2, n=n)
    if error:
        return _invalid(error)
    radii, error = _rows(output["radii"], "radii", width=None, n=n)
    if error:
        return _invalid(error)

    bad: set[int] = set()
    problems: list[str] = []
    negative = [(r, i) for i, r in enumerate(radii) if r < 0]
    if negative:
        r, i = min(negative)
        problems.append(
            f"circle {i} has negative radius {r:.3e}" + _more(negative, "negative radii")
        )
        bad.update(i for _, i in negative)

    outside = []  # (amount, circle, side)
    for i, ((x, y), r) in enumerate(zip(centers, radii, strict=True)):
        for side, amount in zip(_SIDES, (r - x, r - y, x + r - 1.0, y + r - 1.0), strict=True):
            if amount > tol:
                outside.append((amount, i, side))
    if outside:
        amount, i, side = max(outside)
        problems.append(
            f"circle {i} sticks out of the {side} side of the square by {amount:.3e}"
            + _more(outside, "circles outside")
        )
        bad.update(i for _, i, _ in outside)

    overlaps = []  # (amount, i, j)
    for i in range(n):
        xi, yi = centers[i]
        for j in range(i + 1, n):
            amount = radii[i] + radii[j] - math.hypot(xi - centers[j][0], yi - centers[j][1])
            if amount > tol:
                overlaps.append((amount, i, j))
    if overlaps:
        amount, i, j = max(overlaps)
        problems.append(
            f"circles {i} and {j} overlap by {amount:.3e}" + _more(overlaps, "overlapping pairs")
        )
        bad.update(k for _, i, j in overlaps for k in (i, j))

    if problems:
        return _invalid("; ".join(problems) + f" (tolerance {tol:g})", n_valid=n - len(bad))

    total = math.fsum(radii)
    mean = total / n
    gaps = [
        min(x - r, y - r, 1.0 - x - r, 1.0 - y - r)
        for (x, y), r in zip(centers, radii, strict=True)
    ]
    return {
        "correct": True,
        "sum_radii": total,
        "n_valid": n,
        "radius_cv": statistics.pstdev(radii) / mean if mean > 0 else 0.0,
        "border_fraction": sum(gap <= BORDER_GAP for gap in gaps) / n,
    }


def _rows(value: Any, label: str, width: int | None, n: int) -> tuple[list, str | None]:
    """``value`` as n finite floats (``width=None``) or n rows of ``width`` floats, or an error."""
    value = _plain(value)
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        what = "points [x, y]" if width else "numbers"
        return [], f"{label} must be a list of {n} {what}, got {_kind(value)}"
    if len(value) != n:
        return [], f"{label} has {len(value)} entries; expected exactly {n}"
    rows: list[Any] = []  # floats, or rows of floats when width is given
    for i, item in enumerate(value):
        if width is None:
            number, error = _number(item)
            if error:
                return [], f"{label}[{i}] {error}"
            rows.append(number)
            continue
        item = _plain(item)
        if not isinstance(item, Sequence) or isinstance(item, (str, bytes)) or len(item) != width:
            return [], f"{label}[{i}] must be a pair [x, y], got {_kind(item)}"
        row = []
        for k, coordinate in enumerate(item):
            number, error = _number(coordinate)
            if error:
                return [], f"{label}[{i}][{k}] {error}"
            row.append(number)
        rows.append(row)
    return rows, None


def _number(value: Any) -> tuple[float, str | None]:
    value = _plain(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return 0.0, f"must be a number, got {_kind(value)}"
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError):
        return 0.0, "is too large to be a float"
    if not math.isfinite(number):
        return 0.0, f"is not finite ({number})"
    return number, None


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


def _more(found: list, what: str) -> str:
    return f" (worst of {len(found)} {what})" if len(found) > 1 else ""


def _invalid(error: str, n_valid: int = 0) -> dict:
    # No sum_radii or descriptors: an invalid packing must never be ranked or binned.
    return {"correct": False, "error": error, "n_valid": n_valid}
