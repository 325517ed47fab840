"""The classic benchmarks' rules, shared by the built-in problems that use them.

- circle packing in the unit square (AlphaEvolve's n = 26 and n = 32): the strict validity
  check and its metrics (:func:`check_circle_packing`);
- FunSearch's online bin packing: instances from fixed seeds, the L1 lower bound, first-fit and
  best-fit, and the check that a packing was made online (:func:`datasets`,
  :func:`check_online`, :func:`excess`).

The problem specs import these (they run in the engine's trusted scorer process); candidates
never do.
"""

from evoforge.problems.classic._bins import (
    OR_CAPACITY,
    WEIBULL_CAPACITY,
    best_fit,
    check_online,
    datasets,
    excess,
    excess_of,
    first_fit,
    l1_bound,
    or_instances,
    pack_online,
    weibull_instances,
)
from evoforge.problems.classic._circles import BORDER_GAP, TOL, check_circle_packing

__all__ = [
    # circle packing
    "BORDER_GAP",
    "TOL",
    "check_circle_packing",
    # online bin packing
    "OR_CAPACITY",
    "WEIBULL_CAPACITY",
    "best_fit",
    "check_online",
    "datasets",
    "excess",
    "excess_of",
    "first_fit",
    "l1_bound",
    "or_instances",
    "pack_online",
    "weibull_instances",
]
