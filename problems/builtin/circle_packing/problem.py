"""Pack 26 circles in the unit square so that the sum of their radii is as large as possible.

The candidate's ``main()`` takes no arguments and returns
``{"centers": [[x, y], ...], "radii": [r, ...]}``: exactly 26 centres and 26 radii (lists or
numpy arrays). Circle ``i`` is ``centers[i]`` with ``radii[i]``; error messages count from 0.

Validation is strict, with one fixed tolerance ``TOL = 1e-9`` and no rescaling or repair:
every number finite, every radius >= 0, every circle inside the square
(``x - r >= -TOL`` and ``x + r <= 1 + TOL``, the same for ``y``) and no two circles overlapping
(``distance >= r_i + r_j - TOL``). Anything else is rejected with no score and an error that
names the circles and the amount, e.g. "circles 3 and 7 overlap by 1.200e-03".

Metrics: ``sum_radii`` (the objective), ``n_valid`` (circles with no violation of their own),
``radius_cv`` (std/mean of the radii) and ``border_fraction`` (share of circles within 1e-3 of
a side), the last two being the MAP-Elites descriptors.

References: AlphaEvolve 2.6358627564; best open results about 2.63598 (shown as ratios beside
every result). The rules are :func:`evoforge.problems.classic.check_circle_packing`, shared with
``circle_packing_32``.
"""

from evoforge.problems.classic import BORDER_GAP, TOL, check_circle_packing  # noqa: F401

name = "circle_packing"
objectives = {"sum_radii": "maximize"}
family = "circle_packing"  # related to the other circle packings (suite transfer)
descriptors = {
    # Spread of sizes, scale-free: 0 = all equal; the best known packings sit near 0.15-0.25.
    "radius_cv": (0.0, 0.5, 10),
    # Share of circles within BORDER_GAP of a side: interior-heavy versus wall-hugging layouts.
    "border_fraction": (0.0, 1.0, 10),
}
evaluator = "python"
entry = "main"
timeout_s = 10
memory_mb = 1024
preload = ["numpy"]
seed_file = "seed.py"
# The seed's `# knob:` constants (and any a candidate declares) are tuned by TPE after the
# evaluation of each candidate that holds its parent's score: 3 knobs at a time, 8 trials, each
# an evaluation taken from the budget (`--no-tune` turns it off).
tuning = {"trials": 8, "knobs": 3}
# Published bests for n = 26, shown as ratios beside results.
baselines = {
    "AlphaEvolve (2025)": {"sum_radii": 2.6358627564},
    "best open result": {"sum_radii": 2.635983},
}

N = 26


def evaluate(output):
    """Check the packing strictly and score it; never raises, whatever ``output`` is."""
    return check_circle_packing(output, N)
