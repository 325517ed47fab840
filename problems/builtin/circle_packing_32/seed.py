"""Seed for circle_packing_32: 32 circles on staggered rows, radii grown as large as they fit.

Returns ``{"centers": [[x, y], ...], "radii": [r, ...]}`` (32 of each, numpy arrays are fine)
for the unit square; the score is sum(radii).

Inside the EVOLVE-BLOCK:
* ``ROWS`` lays the centres out: each row is (count, y, x_left, x_right) and places ``count``
  centres evenly, at the middles of ``count`` equal slots between x_left and x_right.
* ``compute_radii`` starts every circle at its distance to the nearest wall, shrinks each
  overlapping pair in proportion, then grows each circle, in turn, as far as its neighbours and
  the walls allow. Each step keeps the packing valid, so it is valid for any centres.

Outside the block, ``main`` keeps exactly 32 centres (extra ones dropped, missing ones parked at
the middle with radius 0), clips them into the square and, after ``compute_radii``, shrinks
whatever still overlaps with a 1e-12 relative margin: a no-op for a valid packing, so every edit
that runs returns a valid one.
"""

import numpy as np

N = 32

# EVOLVE-BLOCK-START
ROWS = [
    (6, 0.15, 0.1, 0.9),
    (7, 0.3, 0.1, 0.9),
    (6, 0.45, 0.1, 0.9),
    (7, 0.6, 0.1, 0.9),
    (6, 0.75, 0.1, 0.9),
]
GROW_PASSES = 1


def construct_centers():
    centers = []
    for count, y, left, right in ROWS:
        for k in range(count):
            t = (k + 0.5) / count
            centers.append([left + t * (right - left), y])
    return np.array(centers, dtype=float)


def compute_radii(centers):
    x, y = centers[:, 0], centers[:, 1]
    walls = np.minimum(np.minimum(x, 1.0 - x), np.minimum(y, 1.0 - y))
    radii = walls.copy()
    for i in range(N):
        for j in range(i + 1, N):
            d = np.hypot(x[i] - x[j], y[i] - y[j])
            if radii[i] + radii[j] > d:
                scale = d / (radii[i] + radii[j])
                radii[i] *= scale
                radii[j] *= scale
    for _ in range(GROW_PASSES):
        for i in range(N):
            room = np.hypot(x - x[i], y - y[i]) - radii
            room[i] = walls[i]
            radii[i] = max(0.0, min(walls[i], room.min()))
    return radii


# EVOLVE-BLOCK-END


def _exactly_n(centers):
    centers = np.asarray(centers, dtype=float).reshape(-1, 2)[:N]
    parked = np.full((N - len(centers), 2), 0.5)
    return np.clip(np.nan_to_num(np.vstack([centers, parked]), nan=0.5), 0.0, 1.0)


def _make_valid(centers, radii):
    """Clamp radii to [0, wall distance] and shrink each overlapping pair (1e-12 margin)."""
    x, y = centers[:, 0], centers[:, 1]
    walls = np.minimum(np.minimum(x, 1.0 - x), np.minimum(y, 1.0 - y))
    radii = np.clip(np.nan_to_num(np.asarray(radii, dtype=float).reshape(N), nan=0.0), 0.0, walls)
    for i in range(N):
        d = np.hypot(x[i + 1 :] - x[i], y[i + 1 :] - y[i]) * (1.0 - 1e-12)
        for k in np.flatnonzero(radii[i] + radii[i + 1 :] > d):
            j = i + 1 + k
            if radii[i] + radii[j] > d[k]:  # radii[i] may have shrunk since the mask
                scale = d[k] / (radii[i] + radii[j])
                radii[i] *= scale
                radii[j] *= scale
    return radii


def main():
    centers = _exactly_n(construct_centers())
    radii = _make_valid(centers, compute_radii(centers))
    return {"centers": centers, "radii": radii}
