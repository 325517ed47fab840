"""OpenEvolve's ``feature_dimensions`` / ``feature_bins`` as evoforge descriptors.

OpenEvolve places each program in a MAP-Elites cell with one coordinate per feature
dimension (``database.feature_dimensions``, default ``["complexity", "diversity"]``). A
dimension is, in OpenEvolve's order of priority:

1. a metric the evaluator returns under that name;
2. ``complexity``: the program's length;
3. ``diversity``: how different the program is from a reference set of programs;
4. ``score``: the program's fitness.

Each is cut into ``feature_bins`` bins (an int for every dimension, or a dict per dimension,
10 where it names none); with an int OpenEvolve uses at least
``archive_size ** (1 / dimensions)`` rounded up (default archive_size 100), and so does this
mapping.

OpenEvolve rescales ``score`` and metric-named dimensions to the smallest and largest values
seen so far (min-max, at the time a program is added); its built-in ``complexity`` and
``diversity`` have bins of their own. So:

- ``complexity`` is the engine's built-in ``size`` descriptor (``asinh`` of the relative
  change of the program's tokens over the seed's, in units of 2 %, range -4.4 to 4.4:
  :mod:`evoforge.islands`): length, on a range fixed by the seed rather than by the
  programs seen;
- ``diversity`` is the built-in ``distance`` (square root of the Jaccard distance of token
  5-grams to the seed, range 0 to 1) — OpenEvolve's diversity is a distance to a reference
  set of programs, with its own text measure;
- ``score`` is the descriptor ``fitness`` (OpenEvolve's score) and a metric the descriptor of
  that name, each declared on [0, 1] and given the value min-max scaled as OpenEvolve does
  (:func:`feature_metrics` names them; the engine scales them over the values its run has
  seen: :class:`~evoforge.islands.SeenRanges`), so a metric on any scale (seconds, counts,
  scores of 0.003 to 0.02) spreads over the bins; the metric itself keeps its raw value.

Which names are metrics is read from ``evaluator.py`` before anything runs: a dimension named
as a string anywhere in it (``"radius_variance"``) is taken for a metric it returns, even
``complexity`` or ``diversity`` (priority 1); the others are built-in.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evoforge.problems import Problem, ProblemSpecError

DEFAULT_DIMENSIONS = ("complexity", "diversity")  # OpenEvolve's default feature_dimensions
DEFAULT_BINS = 10  # OpenEvolve's default feature_bins
DEFAULT_ARCHIVE_SIZE = 100  # OpenEvolve's default database.archive_size
BUILTIN = {
    "complexity": ("size", -4.4, 4.4),  # evoforge.islands.BUILTIN_DESCRIPTORS' ranges
    "diversity": ("distance", 0.0, 1.0),
}
"""OpenEvolve's built-in dimension -> (evoforge's built-in descriptor, its range)."""
SCORE = ("fitness", 0.0, 1.0)
METRIC_RANGE = (0.0, 1.0)


@dataclass
class Features:
    """Descriptors for a problem: declared ranges, where each is read, and what was decided."""

    descriptors: dict[str, tuple[float, float, int]] = field(default_factory=dict)
    metrics: dict[str, str] = field(default_factory=dict)
    """descriptor -> the metric it is read from (the engine computes the others)."""
    notes: list[str] = field(default_factory=list)


def feature_dimensions(
    dimensions: Sequence[str] | None,
    bins: int | Mapping[str, int] | None,
    archive_size: int | None,
    evaluator_source: str,
) -> Features:
    """Map OpenEvolve's feature dimensions (see the module docstring).

    Args:
        dimensions: ``database.feature_dimensions`` (None: OpenEvolve's default).
        bins: ``database.feature_bins`` (None: 10).
        archive_size: ``database.archive_size`` (None: 100).
        evaluator_source: ``evaluator.py``, to tell metrics from built-in dimensions.
    """
    names = tuple(DEFAULT_DIMENSIONS if dimensions is None else dimensions)
    strings = _strings(evaluator_source)
    out = Features()
    for name in names:
        count = _bins(name, names, bins, archive_size)
        if name in strings:
            descriptor, low, high = name, *METRIC_RANGE
            out.metrics[descriptor] = name
            what = f"the metric {name}, min-max scaled over the values seen"
        elif name in BUILTIN:
            descriptor, low, high = BUILTIN[name]
            what = f"built-in {descriptor} ({low:g} to {high:g})"
        elif name == "score":
            descriptor, low, high = SCORE
            out.metrics[descriptor] = descriptor
            what = "the program's fitness, min-max scaled over the values seen"
        else:
            descriptor, low, high = name, *METRIC_RANGE
            out.metrics[descriptor] = name
            what = (
                f"the metric {name}, min-max scaled over the values seen (evaluator.py never "
                "names it: a program without it gets no cell, as in OpenEvolve)"
            )
        if descriptor in out.descriptors:
            continue
        out.descriptors[descriptor] = (low, high, count)
        out.notes.append(f"{name} -> {what} in {count} bins")
    origin = "feature_dimensions" if dimensions is not None else "OpenEvolve's default dimensions"
    out.notes = [f"{origin}: " + "; ".join(out.notes)] if out.notes else []
    return out


def _bins(
    name: str,
    names: Sequence[str],
    bins: int | Mapping[str, int] | None,
    archive_size: int | None,
) -> int:
    """OpenEvolve's bin count for ``name`` (``ProgramDatabase.__init__``)."""
    if isinstance(bins, Mapping):
        return int(bins.get(name, DEFAULT_BINS))
    size = DEFAULT_ARCHIVE_SIZE if archive_size is None else archive_size
    given = DEFAULT_BINS if bins is None else bins
    return max(given, int(math.pow(size, 1 / len(names)) + 0.99))


def _strings(source: str) -> set[str]:
    """Every string constant in ``source`` (it parsed before this is called)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def read_dimensions(path: Path, value: Any) -> tuple[str, ...]:
    """``database.feature_dimensions`` as names.

    Raises:
        ProblemSpecError: not a list of non-empty names.
    """
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ProblemSpecError(
            path,
            "database.feature_dimensions",
            f"found {value!r}; expected a list of names, e.g. [complexity, diversity]",
        )
    if not value:
        raise ProblemSpecError(
            path,
            "database.feature_dimensions",
            "is empty; name at least one dimension or leave it out (complexity, diversity)",
        )
    return tuple(value)


def read_bins(path: Path, value: Any) -> int | dict[str, int]:
    """``database.feature_bins``: a whole number >= 1, or a dict of them.

    Raises:
        ProblemSpecError: anything else.
    """

    def whole(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 1

    if whole(value):
        return int(value)
    if isinstance(value, dict) and all(isinstance(k, str) and whole(v) for k, v in value.items()):
        return {str(k): int(v) for k, v in value.items()}
    raise ProblemSpecError(
        path,
        "database.feature_bins",
        f"found {value!r}; expected a whole number >= 1 or {{dimension: bins}}",
    )


def feature_metrics(problem: Problem) -> dict[str, str]:
    """``options['feature_metrics']``: descriptor name -> the metric whose value, min-max
    scaled over the values the run has seen, places a program on it ({} when none).

    Raises:
        ProblemSpecError: not a dict of names, or a descriptor it names is not declared.
    """
    features = problem.options.get("feature_metrics", {})
    ok = isinstance(features, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in features.items()
    )
    if not ok:
        raise ProblemSpecError(
            problem.spec_path,
            "options['feature_metrics']",
            f"found {features!r}; use {{descriptor: metric}}, e.g. {{'spread': 'spread'}}",
        )
    declared = {d.name for d in problem.descriptors}
    for name in features:
        if name not in declared:
            raise ProblemSpecError(
                problem.spec_path,
                "options['feature_metrics']",
                f"names descriptor {name!r}, which the problem does not declare "
                f"({', '.join(sorted(declared)) or 'none'}); declare it in `descriptors`",
            )
    return dict(features)
