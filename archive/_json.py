"""JSON for the ``*_json`` columns: NaN and infinities allowed, numpy scalars accepted."""

from __future__ import annotations

import json
from typing import Any


def _default(value: Any) -> Any:
    # numpy scalars and arrays (np.int64 is not an int, np.float32 not a float): evaluators
    # return them often enough that refusing them would lose results.
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    raise TypeError(
        f"cannot store {type(value).__name__} value {value!r} as JSON; "
        "convert it to a str, number, bool, None, list or dict first"
    )


def dumps(value: Any) -> str:
    """Compact JSON; ``NaN``/``Infinity`` are written as JS literals so they round-trip."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_default)


loads = json.loads
