"""Seed for circle_packing: 26 circles on staggered rows, radii grown as large as they fit.

Returns ``{"centers": [[x, y], ...], "radii": [r, ...]}`` (26 of each, numpy arrays are fine)
for the unit square; the score is sum(radii).

Inside the EVOLVE-BLOCK:
* ``ROWS`` lays the centres out: each row is (count, y, x_left, x_right) and places ``count``
  centres evenly, at the middles of ``count`` equal slots between x_left and x_right. Its
  numbers are knobs (``NAME = value  # knob: float LOW..HIGH``): after a program is scored,
  the autotuner tries other values within those ranges and keeps the best.
* ``compute_radii`` starts every circle at its distance to the nearest wall, shrinks each
  overlapping pair in proportion, then grows each circle, in turn, as far as its neighbours and
  the walls allow. Each step keeps the packing valid, so it is valid for any centres.

Outside the block, ``main`` keeps exactly 26 centres (extra ones dropped, missing ones parked at
the middle with radius 0), clips them into the square and, after ``compute_radii``, shrinks
whatever still overlaps with a 1e-12 relative margin: a no-op for a valid packing, so every edit
that runs returns a valid one.
"""

import numpy as np

N = 26

# EVOLVE-BLOCK-START
# Row r holds COUNT_r centres at height Y_r, evenly spaced between LEFT_r and RIGHT_r.
# Each `# knob:` line is a constant the autotuner may set within its range.
COUNT_1 = 5  # knob: int 3..8
Y_1 = 0.18  # knob: float 0.0..1.0
LEFT_1 = 0.1  # knob: float 0.0..0.5
RIGHT_1 = 0.9  # knob: float 0.5..1.0
COUNT_2 = 6  # knob: int 3..8
Y_2 = 0.34  # knob: float 0.0..1.0
LEFT_2 = 0.1  # knob: float 0.0..0.5
RIGHT_2 = 0.9  # knob: float 0.5..1.0
COUNT_3 = 5  # knob: int 3..8
Y_3 = 0.5  # knob: float 0.0..1.0
LEFT_3 = 0.1  # knob: float 0.0..0.5
RIGHT_3 = 0.9  # knob: float 0.5..1.0
COUNT_4 = 6  # knob: int 3..8
Y_4 = 0.66  # knob: float 0.0..1.0
LEFT_4 = 0.1  # knob: float 0.0..0.5
RIGHT_4 = 0.9  # knob: float 0.5..1.0
COUNT_5 = 4  # knob: int 3..8
Y_5 = 0.82  # knob: float 0.0..1.0
LEFT_5 = 0.1  # knob: float 0.0..0.5
RIGHT_5 = 0.9  # knob: float 0.5..1.0
ROWS = [
    (COUNT_1, Y_1, LEFT_1, RIGHT_1),
    (COUNT_2, Y_2, LEFT_2, RIGHT_2),
    (COUNT_3, Y_3, LEFT_3, RIGHT_3),
    (COUNT_4, Y_4, LEFT_4, RIGHT_4),
    (COUNT_5, Y_5, LEFT_5, RIGHT_5),
]
GROW_PASSES = 1  # knob: int 1..6


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
