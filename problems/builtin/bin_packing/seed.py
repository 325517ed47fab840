"""Seed for bin_packing: best fit with a penalty for leaving a small, hard-to-fill gap.

``priority(item, bins)`` scores each open bin the item fits in; ``bins`` holds their remaining
capacities (a numpy array) and the highest score gets the item (ties: the first bin). The seed
prefers the tightest fit (best fit) but marks down a bin that would be left with a gap below
``GAP``, by ``PENALTY``. Its constants are untuned: it packs worse than plain best fit. Better
heuristics weigh the gap against the item, the bin's fill, or the distribution of sizes.

Outside the EVOLVE-BLOCK the packing loop is fixed: items arrive in order, each goes to the
fitting open bin with the highest priority, and a new bin opens only when none fits.
"""

import numpy as np

# EVOLVE-BLOCK-START
GAP = 10.0
PENALTY = 20.0


def priority(item, bins):
    remaining = bins - item
    score = -remaining
    score = score - PENALTY * ((remaining > 0) & (remaining < GAP))
    return score


# EVOLVE-BLOCK-END


def pack(items, capacity):
    """Pack ``items`` online; returns each item's bin index."""
    remaining = np.empty(len(items))
    opened = 0
    assignment = []
    for item in items:
        fits = np.flatnonzero(remaining[:opened] >= item)
        if fits.size:
            scores = np.asarray(priority(float(item), remaining[fits].copy()), dtype=float)
            scores = scores.reshape(-1)
            if scores.shape != fits.shape:
                raise ValueError(
                    f"priority() returned {scores.size} scores for {fits.size} bins; "
                    "return one score per bin"
                )
            choice = int(fits[int(np.argmax(scores))])
        else:
            choice = opened
            remaining[choice] = capacity
            opened += 1
        remaining[choice] -= item
        assignment.append(choice)
    return assignment


def main(training, held_out):
    """Every instance of every dataset packed online: {part: {dataset: [bins per item]}}."""
    return {
        part: {
            name: [pack(items, data["capacity"]) for items in data["instances"]]
            for name, data in sets.items()
        }
        for part, sets in (("training", training), ("held_out", held_out))
    }
