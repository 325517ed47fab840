"""Online bin packing, FunSearch's benchmark: instances from fixed seeds, the L1 lower bound,
first-fit and best-fit, and the strict check of a packing made online.

Instances (integer item sizes, generated here with fixed seeds; the same on every machine):

- **OR1-OR4 style**: capacity 150, sizes uniform on 20..100, 120 / 250 / 500 / 1000 items per
  instance (the distribution of the OR-Library sets FunSearch used; not their exact items);
- **Weibull 5k**: capacity 100, 5000 items, sizes from a Weibull distribution of shape 3 and
  scale 45, rounded and clipped to 1..100 (FunSearch's generator's distribution).

A *training* set drives selection; a *held-out* set, from other seeds, is reported beside it to
show whether a heuristic over-fits its instances.

The score of a dataset is its excess over the L1 lower bound, in percent:
``100 * (bins used - L1) / L1`` summed over its instances, with ``L1 = ceil(sum(sizes) /
capacity)`` per instance (no packing can use fewer bins).

Online means: items arrive one at a time, in order; each goes into an already open bin that has
room, or into a new bin only when no open bin has room (any-fit). :func:`check_online` checks
exactly that for a given assignment, so a packing that opens bins it did not need, overfills a
bin or skips an item is rejected, whatever produced it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

OR_CAPACITY = 150
WEIBULL_CAPACITY = 100
_OR_ITEMS = {"or1": 120, "or2": 250, "or3": 500, "or4": 1000}
TRAINING_SEED = 20231214  # FunSearch's publication date; any fixed number would do
HELD_OUT_SEED = 7


def or_instances(n_items: int, count: int, seed: int) -> list[list[int]]:
    """``count`` instances of ``n_items`` sizes uniform on 20..100 (capacity 150)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return [rng.integers(20, 101, n_items).tolist() for _ in range(count)]


def weibull_instances(n_items: int, count: int, seed: int) -> list[list[int]]:
    """``count`` instances of Weibull(shape 3, scale 45) sizes, rounded, clipped to 1..100."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return [
        np.clip(np.round(rng.weibull(3.0, n_items) * 45.0), 1, 100).astype(int).tolist()
        for _ in range(count)
    ]


def datasets(*, held_out: bool = False) -> dict[str, dict[str, Any]]:
    """The training (or held-out) datasets: ``{name: {"capacity": c, "instances": [[...]]}}``.

    Training: 3 instances of each OR set and 3 of Weibull 5k (20,610 items); held-out: 2 of
    each OR set and 1 of Weibull 5k, from other seeds (8,740 items). Costs a few ms; packing
    them all online in Python takes about a second.
    """
    base, count, weibull = (HELD_OUT_SEED, 2, 1) if held_out else (TRAINING_SEED, 3, 3)
    found: dict[str, dict[str, Any]] = {}
    for index, (name, n_items) in enumerate(_OR_ITEMS.items()):
        found[name] = {
            "capacity": OR_CAPACITY,
            "instances": or_instances(n_items, count, base * 10 + index),
        }
    found["weibull_5k"] = {
        "capacity": WEIBULL_CAPACITY,
        "instances": weibull_instances(5000, weibull, base * 10 + 9),
    }
    return found


def l1_bound(items: Sequence[int], capacity: int) -> int:
    """The L1 lower bound: no packing uses fewer than ``ceil(sum / capacity)`` bins."""
    return math.ceil(sum(items) / capacity)


def pack_online(
    items: Sequence[int], capacity: int, priority: Callable[[float, Any], Any]
) -> list[int]:
    """Pack online: each item goes to the fitting open bin of highest ``priority(item, bins)``
    (``bins``: the remaining capacities of the open bins it fits in; ties to the first), or
    opens a new bin when none fits. Returns each item's bin index."""
    import numpy as np

    remaining = np.empty(len(items))
    opened = 0
    assignment = []
    for item in items:
        fits = np.flatnonzero(remaining[:opened] >= item)
        if fits.size:
            scores = np.asarray(priority(float(item), remaining[fits].copy()), dtype=float)
            choice = int(fits[int(np.argmax(scores.reshape(-1)))])
        else:
            choice, opened = opened, opened + 1
            remaining[choice] = capacity
        remaining[choice] -= item
        assignment.append(choice)
    return assignment


def first_fit(item: float, bins: Any) -> Any:
    """First fit: every fitting bin scores the same, so the first one takes the item."""
    import numpy as np

    return np.zeros_like(bins)


def best_fit(item: float, bins: Any) -> Any:
    """Best fit: the bin left with the least room takes the item."""
    return -(bins - item)


def check_online(items: Sequence[int], capacity: int, assignment: Any) -> tuple[int, str]:
    """``(bins used, "")`` for a valid online packing, or ``(0, what is wrong)``.

    Valid: one bin index per item; bins are opened in order (a new bin is number ``opened``);
    a bin never holds more than ``capacity``; and a new bin is opened only when no open bin
    has room for the item (the any-fit rule of online packing).
    """
    import numpy as np

    if not isinstance(assignment, list) or len(assignment) != len(items):
        got = len(assignment) if isinstance(assignment, list) else type(assignment).__name__
        return 0, f"expected {len(items)} bin indices (one per item), got {got}"
    remaining = np.zeros(len(items), dtype=np.int64)  # at most one bin per item
    opened = 0
    for position, (item, choice) in enumerate(zip(items, assignment, strict=True)):
        if isinstance(choice, bool) or not isinstance(choice, int):
            return 0, f"item {position}: bin index {choice!r} is not a whole number"
        if choice == opened:
            if opened and remaining[:opened].max() >= item:  # numpy: O(bins) only per new bin
                best = int(np.argmax(remaining[:opened]))
                return 0, (
                    f"item {position} (size {item}) opened bin {choice} although bin {best} "
                    f"had room {int(remaining[best])}: online packing opens a bin only when no "
                    "open bin fits"
                )
            remaining[opened] = capacity
            opened += 1
        elif not 0 <= choice < opened:
            return 0, (
                f"item {position}: bin {choice} is not open (bins 0..{opened - 1} are; a new "
                f"bin must be number {opened})"
            )
        if remaining[choice] < item:
            return 0, (
                f"item {position} (size {item}) does not fit in bin {choice} (room "
                f"{int(remaining[choice])} of {capacity})"
            )
        remaining[choice] -= item
    return opened, ""


def excess(
    dataset: Mapping[str, Any], packings: Any, *, name: str = "dataset"
) -> tuple[float, int, str]:
    """``(excess over L1 in percent, bins used, "")`` for the packings of a dataset's instances,
    or ``(nan, 0, what is wrong)``."""
    instances, capacity = dataset["instances"], dataset["capacity"]
    if not isinstance(packings, list) or len(packings) != len(instances):
        got = len(packings) if isinstance(packings, list) else type(packings).__name__
        return math.nan, 0, f"{name}: expected {len(instances)} packings, got {got}"
    used = bound = 0
    for index, (items, packing) in enumerate(zip(instances, packings, strict=True)):
        bins, error = check_online(items, capacity, packing)
        if error:
            return math.nan, 0, f"{name}, instance {index}: {error}"
        used += bins
        bound += l1_bound(items, capacity)
    return 100.0 * (used - bound) / bound, used, ""


def excess_of(priority: Callable[[float, Any], Any], sets: Mapping[str, Any]) -> dict[str, float]:
    """Excess over L1 in percent per dataset of a priority function (for baselines)."""
    found = {}
    for name, dataset in sets.items():
        packings = [
            pack_online(items, dataset["capacity"], priority) for items in dataset["instances"]
        ]
        found[name], _, _ = excess(dataset, packings, name=name)
    return found
