"""The classic benchmarks' rules, shared by the built-in problems that use them.

- circle packing in the unit square (AlphaEvolve's n = 26 and n = 32): the strict validity
  check and its metrics (:func:`check_circle_packing`);
- FunSearch's online bin packing: instances from fixed seeds, the L1 lower bound, first-fit and
  best-fit, and the check that a packing was made online (:func:`datasets`,
  :func:`check_online`, :func:`excess`).

The problem specs import these (they run in the engine's trusted scorer process); candidates
never do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.problems.classic._bins import (
        OR_CAPACITY as OR_CAPACITY,
        WEIBULL_CAPACITY as WEIBULL_CAPACITY,
        best_fit as best_fit,
        check_online as check_online,
        datasets as datasets,
        excess as excess,
        excess_of as excess_of,
        first_fit as first_fit,
        l1_bound as l1_bound,
        or_instances as or_instances,
        pack_online as pack_online,
        weibull_instances as weibull_instances,
    )
    from evoforge.problems.classic._circles import (
        BORDER_GAP as BORDER_GAP,
        TOL as TOL,
        check_circle_packing as check_circle_packing,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
