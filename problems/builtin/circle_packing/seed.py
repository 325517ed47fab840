"""Seed for circle_packing: 26 circles on staggered rows, then moved apart and grown together.

Returns ``{"centers": [[x, y], ...], "radii": [r, ...]}`` (26 of each, numpy arrays are fine)
for the unit square; the score is sum(radii).

Inside the EVOLVE-BLOCK:
* ``ROWS`` lays the centres out: each row is (count, y, x_left, x_right) and places ``count``
  centres evenly, at the middles of ``count`` equal slots between x_left and x_right.
* ``compute_radii`` starts every circle at its distance to the nearest wall, shrinks each
  overlapping pair in proportion, then grows each circle, in turn, as far as its neighbours and
  the walls allow. Each step keeps the packing valid, so it is valid for any centres.
* ``relax`` then moves centres and radii together by gradient steps on "sum of radii minus a
  growing penalty for overlaps": a local optimiser, whose result may overlap slightly.
* Numbers followed by ``# knob: ...`` are knobs (``NAME = value  # knob: float LOW..HIGH``):
  after a program is scored, the autotuner tries other values within those ranges and keeps
  the best.

Outside the block, ``main`` keeps exactly 26 centres (extra ones dropped, missing ones parked at
the middle with radius 0), clips them into the square and, after ``relax``, shrinks whatever
still overlaps with a 1e-12 relative margin (a no-op for a valid packing), so every edit that
runs returns a valid one.
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
# `relax` then moves centres and radii together, RELAX_STEPS times, downhill on
#     loss = -sum(radii) + weight * (sum of squared overlaps and wall violations),
# with Adam steps of size RELAX_LR (times LR_DECAY ** step) and a weight that starts at
# PENALTY and grows by PENALTY_GROWTH each step, so overlaps are cheap early (circles push
# through each other) and expensive late (the packing settles). 0 steps keeps the rows as they are.
RELAX_STEPS = 40  # knob: int 0..600
RELAX_LR = 0.001  # knob: float 0.0001..0.03 log
LR_DECAY = 0.999  # knob: float 0.98..1.0
PENALTY = 10.0  # knob: float 1.0..300.0 log
PENALTY_GROWTH = 1.001  # knob: float 1.0..1.03


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


def relax(centers, radii):
    c, r = centers.copy(), radii.copy()
    m = np.zeros((N, 3))  # Adam's running mean and mean square of the gradient
    v = np.zeros((N, 3))
    weight = PENALTY
    for t in range(1, RELAX_STEPS + 1):
        diff = c[:, None, :] - c[None, :, :]  # diff[i, j] = c[i] - c[j]
        dist = np.maximum(np.sqrt((diff**2).sum(-1)), 1e-12)  # no 0 / 0 for equal centres
        overlap = np.maximum(r[:, None] + r[None, :] - dist, 0.0)
        np.fill_diagonal(overlap, 0.0)
        below = np.maximum(r[:, None] - c, 0.0)  # circle i past the left / bottom wall
        above = np.maximum(r[:, None] + c - 1.0, 0.0)  # past the right / top wall
        grad = np.empty((N, 3))
        grad[:, :2] = weight * (above - below - 2.0 * ((overlap / dist)[:, :, None] * diff).sum(1))
        grad[:, 2] = -1.0 + weight * (2.0 * overlap.sum(1) + below.sum(1) + above.sum(1))
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        step = RELAX_LR * LR_DECAY**t * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-12)
        c = np.clip(c - step[:, :2], 0.0, 1.0)
        r = np.maximum(r - step[:, 2], 0.0)
        weight *= PENALTY_GROWTH
    return c, r


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
    centers, radii = relax(centers, compute_radii(centers))
    centers = _exactly_n(centers)
    radii = _make_valid(centers, radii)
    return {"centers": centers, "radii": radii}
