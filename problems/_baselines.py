"""Baselines: reference values that results are reported against, as ratios.

A spec declares constants (published figures, known stock results) or measures them with a
function, for references that depend on the host (a compiler's stock output, a heuristic run
on instances generated at setup)::

    baselines = {"AlphaEvolve (published)": {"sum_radii": 2.6358627564}}

    def baselines():  # called once per session, in the engine's process (trusted code)
        return {"stock -Oz": {"text_bytes": measure_stock_size()}}

The session stores what it measured with its start event, so summaries and the archive's
readers show the same ratios later without measuring again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import TypeAdapter, ValidationError

from evoforge.problems._declaration import ProblemSpecError, check_baselines
from evoforge.problems._loader import import_spec

if TYPE_CHECKING:
    from evoforge.problems._spec import Problem

_SHAPE = TypeAdapter(dict[str, dict[str, float]])


def measure_baselines(problem: Problem) -> dict[str, dict[str, float]]:
    """The problem's declared baselines, and those its ``baselines()`` measures (which win on a
    shared label).

    Costs what the spec's function costs (it may compile or simulate); call it once per
    session.

    Raises:
        ProblemSpecError: ``baselines()`` raised, or returned something other than
            ``{label: {objective: nonzero number}}``.
    """
    result = {label: dict(values) for label, values in problem.baselines.items()}
    if not problem.measures_baselines:
        return result
    where = "baselines()"
    try:
        measured = import_spec(problem.spec_path).baselines()
    except ProblemSpecError:
        raise
    except Exception as exc:
        raise ProblemSpecError(
            problem.spec_path, where, f"raised {type(exc).__name__}: {exc}"
        ) from exc
    try:
        measured = _SHAPE.validate_python(measured, strict=False)
        check_baselines(
            measured, [o.name for o in problem.objectives], [s.name for s in problem.held_out]
        )
    except (ValidationError, ValueError) as exc:
        detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise ProblemSpecError(
            problem.spec_path,
            where,
            f"returned {type(measured).__name__}: {detail}; return "
            '{"label": {"objective": number}}',
        ) from None
    result.update(measured)
    return result
