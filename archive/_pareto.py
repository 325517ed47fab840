"""Non-dominated sorting for Pareto-front queries."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def non_dominated(points: npt.ArrayLike) -> np.ndarray:
    """Indices of the rows of ``points`` that no other row dominates, in ascending order.

    Every column is to be maximised (orient minimised objectives first). Row ``a`` dominates
    row ``b`` when it is at least as good in every column and strictly better in one, so equal
    rows do not dominate each other and are all kept. Rows must not contain NaN.

    Rows are visited in descending lexicographic order, in which any dominator of a row comes
    before it; a row is kept unless a row already kept dominates it (a dominated dominator
    is itself dominated by a kept row). Cost is O(n log n + n * front size).
    """
    points = np.asarray(points, dtype=float)
    if points.ndim != 2:
        raise ValueError(f"points must be a 2-D array (rows x objectives), got {points.shape}")
    n, m = points.shape
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    # lexsort sorts by the last key first; negate for descending order.
    order = np.lexsort(tuple(-points[:, j] for j in reversed(range(m))))
    front = np.empty((n, m))
    kept: list[int] = []
    for i in order:
        p = points[i]
        f = front[: len(kept)]
        if len(kept) and np.any(np.all(f >= p, axis=1) & np.any(f > p, axis=1)):
            continue
        front[len(kept)] = p
        kept.append(int(i))
    return np.sort(np.asarray(kept, dtype=np.intp))
