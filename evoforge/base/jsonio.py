"""JSON for everything the engine writes or sends: numpy values accepted, NaN and infinities kept.

One encoder for the archive's ``*_json`` columns and the sandbox's wire frames, so a value that
travels from a candidate to the archive is converted the same way at every hop.

Values that come from a candidate (its output, and whatever ``evaluate()`` echoes of it into the
metrics) are untrusted: any type, size, depth or number. :func:`sanitize` bounds them where they
enter the engine (the scorer's reply, an evaluator's result), so that nothing downstream, the
encoder, the decoder, ``float()``, the archive, can fail on them; :func:`loads_untrusted` decodes
such text without ever raising anything but :class:`ValueError`.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from typing import Any

__all__ = [
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_EXACT_DIGITS",
    "MAX_NODES",
    "dumps",
    "loads",
    "loads_untrusted",
    "sanitize",
    "to_jsonable",
]

MAX_DEPTH = 64
"""Containers nested deeper than this are cut (JSON decoders recurse; ~1000 levels overflow)."""
MAX_NODES = 100_000
"""Values (containers, numbers, strings) kept in one sanitized value; the rest is cut."""
MAX_CHARS = 100_000
"""Characters kept of one string."""
MAX_EXACT_DIGITS = 20_000
"""Integers with more digits are decoded as floats (``±inf`` past the float range): exact
decoding costs quadratic time in Python 3.11 (20,000 digits: about 10 ms; 10^6: 20 s)."""
_INT_RANGE = 2**63  # integers outside [-2**63, 2**63) are stored as floats
_CUT = "[evoforge: cut]"


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
    raise TypeError(_unsupported(value))


def dumps(value: Any) -> str:
    """Compact JSON text. ``NaN``/``Infinity`` are written as JS literals so they round-trip;
    non-ASCII is escaped, so even a lone surrogate from a candidate's text encodes."""
    return json.dumps(value, separators=(",", ":"), default=to_jsonable)


loads = json.loads


def loads_untrusted(text: str | bytes) -> Any:
    """Decode JSON from an untrusted source; only ever raises :class:`ValueError`.

    Integers of more than 4,300 digits (Python's default limit) are decoded exactly up to
    :data:`MAX_EXACT_DIGITS` digits and as floats beyond (``±inf`` past the float range).

    Raises:
        ValueError: the text is not JSON (:class:`json.JSONDecodeError`), or it is nested too
            deeply to decode (the decoder would exhaust the stack).
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("the JSON text is nested too deeply to decode") from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer literal past int_max_str_digits
        pass
    try:
        return json.loads(text, parse_int=_parse_int)
    except RecursionError:
        raise ValueError("the JSON text is nested too deeply to decode") from None


def _parse_int(digits: str) -> int | float:
    if len(digits.lstrip("-")) > MAX_EXACT_DIGITS:
        return float(digits)  # linear time; inf past the float range
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return int(digits)
    finally:
        sys.set_int_max_str_digits(limit)


def sanitize(
    value: Any,
    *,
    strict: bool = True,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_NODES,
    max_chars: int = MAX_CHARS,
) -> Any:
    """A copy of ``value`` that every JSON encoder and decoder, ``float()`` and the archive
    accept, whatever ``value`` was. Iterative: no depth can exhaust the stack here.

    - containers nested deeper than ``max_depth`` become the string ``"[evoforge: cut]"``;
    - at most ``max_nodes`` values are kept: a list then ends with a note of how many items
      were cut, a dict gets a ``"[evoforge: cut]"`` key saying so;
    - strings longer than ``max_chars`` are cut, with a note;
    - integers outside ``[-2**63, 2**63)`` become floats (``±inf`` past the float range), so
      no consumer overflows converting them; ``bool``, finite and non-finite floats are kept;
    - tuples and sets become lists, numpy arrays and scalars Python values (an array of more
      than ``max_nodes`` elements is described, not converted), non-string keys strings as
      ``json.dumps`` writes them.

    Args:
        strict: other types raise :class:`TypeError` (as :func:`dumps` would); with
            ``False`` they become a string naming their type.
    """
    budget = max_nodes
    holder: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, holder, 0, 0)]
    while stack:
        item, parent, key, depth = stack.pop()
        budget -= 1
        item = _plain(item, max_nodes)
        if item is None or isinstance(item, bool | float):
            parent[key] = item
        elif isinstance(item, int):
            parent[key] = item if -_INT_RANGE <= item < _INT_RANGE else _int_as_float(item)
        elif isinstance(item, str):
            parent[key] = _cut_text(item, max_chars)
        elif isinstance(item, dict | list | tuple | set | frozenset):
            if depth >= max_depth:
                parent[key] = f"{_CUT} nested deeper than {max_depth} levels"
                continue
            room = max(0, budget - len(stack))
            if isinstance(item, dict):
                out: dict[str, Any] = {}
                parent[key] = out
                for k, v in itertools.islice(item.items(), room):
                    name = _key(k, strict, max_chars)
                    out[name] = None
                    stack.append((v, out, name, depth + 1))
                if len(item) > room:
                    out[_CUT] = f"{len(item) - room} more items"
            else:
                kept = list(itertools.islice(item, room))
                rest = len(item) - len(kept)
                seq: list[Any] = [None] * len(kept)
                parent[key] = seq
                stack.extend((v, seq, i, depth + 1) for i, v in reversed(list(enumerate(kept))))
                if rest:
                    seq.append(f"{_CUT} {rest} more items")
        elif strict:
            raise TypeError(_unsupported(item))
        else:
            parent[key] = f"[evoforge: a {type(item).__name__} value, not JSON]"
    return holder[0]


def _plain(item: Any, max_nodes: int) -> Any:
    """numpy arrays and scalars as Python values (a huge array as a description)."""
    if type(item).__module__ != "numpy" or not hasattr(item, "tolist"):
        return item
    size = getattr(item, "size", 1)
    if isinstance(size, int) and size > max_nodes:
        return f"{_CUT} a numpy array of shape {getattr(item, 'shape', '?')}"
    return item.tolist()


def _int_as_float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _cut_text(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"{_CUT} {len(text) - max_chars} more characters"


def _key(key: Any, strict: bool, max_chars: int) -> str:
    """A dict key as ``json.dumps`` writes it (str, number, bool or None keys)."""
    if isinstance(key, str):
        return _cut_text(key, max_chars)
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    if isinstance(key, int):
        return str(key) if -_INT_RANGE <= key < _INT_RANGE else repr(_int_as_float(key))
    if isinstance(key, float):
        return json.dumps(key)
    if strict:
        raise TypeError(f"a dict key of type {type(key).__name__} cannot be sent as JSON")
    return f"[evoforge: a {type(key).__name__} key]"


def _unsupported(value: Any) -> str:
    return (
        f"a {type(value).__name__} value cannot be stored or sent as JSON; convert it to a "
        "str, number, bool, None, list, dict (string keys) or numpy array first"
    )
