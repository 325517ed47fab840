"""Turning what a problem's ``evaluate()`` returned into a typed verdict (every evaluator)."""

from __future__ import annotations

import itertools
import math
import reprlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evoforge.archive import EvalResult, Status
from evoforge.base import jsonio
from evoforge.base.redaction import redact
from evoforge.problems import PASSED

if TYPE_CHECKING:
    from evoforge.problems import Problem


def classify_metrics(
    problem: Problem, metrics: Mapping[str, Any]
) -> tuple[Status, str, dict[str, float], dict[str, float]]:
    """Check what ``evaluate()`` returned against the problem's declarations.

    Returns:
        ``(status, error, objectives, descriptors)``: INCORRECT with a reason when the metrics
        say ``"correct": False`` or lack a finite value for a declared objective or descriptor;
        otherwise OK with the declared values as floats. The objective ``passed``
        (:data:`~evoforge.problems.PASSED`, a correctness-only run's) is 1.0 for every
        program that gets this far, unless the metrics give it.
    """
    if "correct" in metrics and not _truthy(metrics["correct"]):
        error = metrics.get("error") or "evaluate() reported correct=False"
        return Status.INCORRECT, error if isinstance(error, str) else _short(error), {}, {}
    values: dict[str, dict[str, float]] = {"objective": {}, "descriptor": {}}
    for kind, names in (
        ("objective", [o.name for o in problem.objectives]),
        ("descriptor", [d.name for d in problem.descriptors]),
    ):
        for name in names:
            value = metrics.get(name)
            if name == PASSED and kind == "objective" and name not in metrics:
                values[kind][name] = 1.0  # it passed every check that ran
                continue
            if name not in metrics:
                return (
                    Status.INCORRECT,
                    (
                        f"evaluate() returned no {kind} {name!r} (it returned "
                        f"{sorted(metrics)}); every declared {kind} must be "
                        "in the metrics"
                    ),
                    {},
                    {},
                )
            number = _finite(value)
            if number is None:
                return (
                    Status.INCORRECT,
                    f"{kind} {name!r} is {_short(value)}; expected a finite number",
                    {},
                    {},
                )
            values[kind][name] = number
    return Status.OK, "", values["objective"], values["descriptor"]


def _finite(value: Any) -> float | None:
    """``value`` as a finite float, or None (not a number, a bool, NaN, infinite, or an
    integer too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _short(value: Any) -> str:
    """A bounded description of a metric value (it may be huge, deep or hostile)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = reprlib.repr(value)
    except Exception:
        text = f"a {type(value).__name__}"
    return text[:200]


def _truthy(value: Any) -> bool:
    try:
        return bool(value)
    except Exception:  # e.g. a numpy array of several elements
        return False


ARTIFACT_CHARS = 10_000
"""Characters kept of one artifact text (an error, a traceback, an output tail)."""


def contain_result(result: Any) -> EvalResult:
    """An evaluator's result made safe to store and show, whatever it holds.

    What a candidate produced, or ``evaluate()`` echoed of it, reaches the engine here (from any
    evaluator, built-in or plugin), so every field is bounded or converted: metrics through
    :func:`evoforge.base.jsonio.sanitize` (depth, size, huge integers, unknown types); objectives,
    descriptors and timings as floats (an ``ok`` result whose objective or descriptor is not a
    finite number becomes ``incorrect``, saying which); artifacts and device texts as strings,
    capped (:data:`ARTIFACT_CHARS`) and with secrets redacted. Never raises: a result that cannot
    be read at all becomes ``crashed``, saying why.
    """
    if not isinstance(result, EvalResult):
        return EvalResult(
            Status.CRASHED,
            artifacts={"error": f"the evaluator returned a {type(result).__name__}, not a result"},
        )
    try:
        status = Status(result.status)
    except (ValueError, TypeError):
        status = Status.CRASHED
        artifacts = {"error": f"the evaluator returned an unknown status {_short(result.status)}"}
    else:
        artifacts = {}
    artifacts = {**_texts(result.artifacts, ARTIFACT_CHARS, redacted=True), **artifacts}
    metrics = jsonio.sanitize(
        result.metrics if isinstance(result.metrics, dict) else {}, strict=False
    )
    numbers: dict[str, dict[str, float]] = {}
    for kind, given in (("objective", result.objectives), ("descriptor", result.descriptors)):
        numbers[kind] = {}
        for name, value in given.items() if isinstance(given, dict) else ():
            number = _finite(value)
            if number is None and status is Status.OK:
                status = Status.INCORRECT
                artifacts["error"] = (
                    f"{kind} {_short(name)} is {_short(value)}; expected a finite number"
                )
            if number is not None:
                numbers[kind][_text(name, 200)] = number
    if status is not Status.OK:
        numbers = {"objective": {}, "descriptor": {}}
    timings = {}
    for name, value in result.timings.items() if isinstance(result.timings, dict) else ():
        number = _finite(value)
        if number is not None:
            timings[_text(name, 200)] = number
    return EvalResult(
        status,
        metrics,
        numbers["objective"],
        numbers["descriptor"],
        artifacts,
        timings,
        _texts(result.device, 1000, redacted=False),
        # Knob tuning's trials and its tuned program (engine-made, but checked all the same).
        evaluations=_evaluations(result.evaluations),
        source=result.source if isinstance(result.source, str) else None,
    )


def _evaluations(value: Any) -> int:
    """The evaluations a result used: a positive int, else 1."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 1_000_000:
        return value
    return 1


def _texts(given: Any, cap: int, *, redacted: bool) -> dict[str, str]:
    if not isinstance(given, dict):
        return {}
    out = {}
    for key, value in itertools.islice(given.items(), 100):
        text = _text(value, cap)
        out[_text(key, 200)] = redact(text) if redacted else text
    return out


def _text(value: Any, cap: int) -> str:
    try:
        text = value if isinstance(value, str) else str(value)
    except Exception:
        text = f"[a {type(value).__name__} that cannot be shown]"
    if len(text) > cap:
        text = text[:cap] + f"\n[evoforge: cut; {len(text) - cap} more characters]"
    return text
