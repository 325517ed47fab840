"""JSON for everything the engine writes or sends: numpy values accepted, NaN and infinities kept.

One encoder for the archive's ``*_json`` columns and the sandbox's wire frames, so a value that
travels from a candidate to the archive is converted the same way at every hop.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps", "loads", "to_jsonable"]


def to_jsonable(value: Any) -> Any:
    """``json.dumps`` hook: numpy arrays become nested lists, numpy scalars Python numbers, sets
    sorted lists.

    numpy is recognised by module name, so this works (and costs nothing) without numpy;
    ``np.int64`` is not an ``int`` nor ``np.float32`` a ``float``, and evaluators return them
    often enough that refusing them would lose results.

    Raises:
        TypeError: anything else that JSON has no form for, with the fix.
    """
    tolist = getattr(value, "tolist", None)
    if tolist is not None and type(value).__module__ == "numpy":
        return tolist()
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    raise TypeError(
        f"a {type(value).__name__} value cannot be stored or sent as JSON; convert it to a "
        "str, number, bool, None, list, dict (string keys) or numpy array first"
    )


def dumps(value: Any) -> str:
    """Compact JSON text. ``NaN``/``Infinity`` are written as JS literals so they round-trip;
    non-ASCII is escaped, so even a lone surrogate from a candidate's text encodes."""
    return json.dumps(value, separators=(",", ":"), default=to_jsonable)


loads = json.loads
