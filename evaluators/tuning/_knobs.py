"""Tunable knobs: constants a program declares with a trailing ``# knob:`` comment.

The form is plain Python, so a newcomer (and a model) can read and write it::

    GROW_PASSES = 2  # knob: int 1..6
    MARGIN = 0.05  # knob: float 0.0..0.2
    SCALE = 1.0  # knob: float 0.25..4 log
    ORDER = "rows"  # knob: "rows" | "columns"

One assignment of a literal per line, inside an EVOLVE-BLOCK; the literal is the knob's
current value (its default); a default outside the range (an edit moved it) widens it.
``int LOW..HIGH`` and ``float LOW..HIGH`` are inclusive ranges (``log`` samples on a log
scale; both bounds > 0);
a categorical knob lists Python literals separated by ``|``. :func:`write_back` replaces the
literals by tuned values and touches nothing else, so the program the model sees next is the
one that was scored.

Parsing is a line scan (about 10 µs per line); nothing is executed.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

from evoforge.problems import BlockError, find_blocks

_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<name>[A-Za-z_][A-Za-z_0-9]*)[ \t]*=[ \t]*(?P<value>[^#\n]+?)"
    r"[ \t]*#[ \t]*knob:[ \t]*(?P<spec>[^\n]*?)[ \t]*$",
    re.MULTILINE,
)
_RANGE = re.compile(
    r"^(?P<kind>int|float)[ \t]+(?P<low>[-+0-9.eE]+)[ \t]*\.\.[ \t]*(?P<high>[-+0-9.eE]+)"
    r"(?P<log>[ \t]+log)?$"
)


class KnobError(ValueError):
    """A ``# knob:`` comment that cannot be used; the message names the line and the fix."""


@dataclass(frozen=True)
class Knob:
    """One tunable constant: where its literal is in the source, and what values it may take.

    Attributes:
        name: the assigned name (``GROW_PASSES``).
        kind: ``int``, ``float`` or ``categorical``.
        default: the value written in the program.
        low, high: inclusive bounds (numbers only).
        log: sample on a log scale (numbers only).
        choices: the allowed values (categorical only).
        start, end: character offsets of the literal in the source.
    """

    name: str
    kind: str
    default: Any
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple[Any, ...] = ()
    start: int = 0
    end: int = 0


def find_knobs(source: str) -> list[Knob]:
    """The knobs declared inside the EVOLVE-BLOCK regions of ``source``, in order.

    Raises:
        KnobError: a malformed ``# knob:`` comment, a default outside its range, or a name
            declared twice; the message says which line and how to write it.
    """
    try:
        blocks = find_blocks(source)
    except BlockError:
        return []
    knobs: list[Knob] = []
    for match in _LINE.finditer(source):
        if not any(b.contains(match.start(), match.end()) for b in blocks):
            continue
        line_number = source.count("\n", 0, match.start()) + 1
        knob = _parse(match, line_number)
        if any(k.name == knob.name for k in knobs):
            raise KnobError(f"line {line_number}: knob {knob.name} is declared twice")
        knobs.append(knob)
    return knobs


def write_back(source: str, knobs: list[Knob], values: dict[str, Any]) -> str:
    """``source`` with each knob's literal replaced by ``values[name]`` (others unchanged)."""
    parts, at = [], 0
    for knob in sorted(knobs, key=lambda k: k.start):
        if knob.name not in values:
            continue
        parts += [source[at : knob.start], literal(knob, values[knob.name])]
        at = knob.end
    parts.append(source[at:])
    return "".join(parts)


def literal(knob: Knob, value: Any) -> str:
    """How a tuned value is written: ints as ints, floats with 6 significant digits."""
    if knob.kind == "int":
        return str(int(value))
    if knob.kind == "float":
        text = f"{float(value):.6g}"
        return text if any(c in text for c in ".en") else text + ".0"
    return repr(value)


def _parse(match: re.Match[str], line: int) -> Knob:
    name, spec, text = match["name"], match["spec"], match["value"]
    where = f"line {line}: knob {name}"
    try:
        default = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise KnobError(
            f"{where}: {text!r} is not a literal; a knob is `NAME = 3  # knob: int 1..8`"
        ) from None
    start = match.start("value")
    end = start + len(text)
    if "|" in spec or spec.startswith(("'", '"')):
        try:
            choices = tuple(ast.literal_eval(part.strip()) for part in spec.split("|"))
        except (ValueError, SyntaxError):
            raise KnobError(
                f"{where}: choices {spec!r} must be Python literals separated by |, "
                'e.g. `# knob: "rows" | "columns"`'
            ) from None
        if default not in choices:
            raise KnobError(f"{where}: {default!r} is not one of its choices {list(choices)}")
        return Knob(name, "categorical", default, choices=choices, start=start, end=end)
    found = _RANGE.match(spec)
    if found is None:
        raise KnobError(
            f"{where}: cannot read {spec!r}; write `int LOW..HIGH`, `float LOW..HIGH [log]` "
            'or `"a" | "b"`'
        )
    kind, log = found["kind"], bool(found["log"])
    low, high = float(found["low"]), float(found["high"])
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise KnobError(f"{where}: needs finite LOW < HIGH, found {low:g}..{high:g}")
    if log and low <= 0:
        raise KnobError(f"{where}: a log range needs LOW > 0, found {low:g}")
    if isinstance(default, bool) or not isinstance(default, int | float):
        raise KnobError(f"{where}: {kind} knob has the non-number default {default!r}")
    if kind == "int" and not isinstance(default, int):
        raise KnobError(f"{where}: int knob has the float default {default!r}; write an int")
    # A value edited past its range (by the model) widens the range rather than losing the knob.
    low, high = min(low, default), max(high, default)
    if log and low <= 0:
        raise KnobError(f"{where}: the log range {low:g}..{high:g} needs values > 0")
    return Knob(name, kind, default, low=low, high=high, log=log, start=start, end=end)
