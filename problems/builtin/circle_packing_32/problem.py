"""Pack 32 circles in the unit square so that the sum of their radii is as large as possible.

The n = 32 benchmark of AlphaEvolve, with the same answer format, validation and metrics as
``circle_packing`` (n = 26): ``main()`` returns ``{"centers": [[x, y], ...], "radii": [r, ...]}``
with exactly 32 of each, checked strictly with one fixed tolerance (1e-9) by
:func:`evoforge.problems.classic.check_circle_packing`.

References, shown as ratios beside every result: AlphaEvolve 2.937945; best open result
2.939540.
"""

from evoforge.problems.classic import check_circle_packing

name = "circle_packing_32"
objectives = {"sum_radii": "maximize"}
family = "circle_packing"  # related to the other circle packings (suite transfer)
descriptors = {
    "radius_cv": (0.0, 0.5, 10),
    "border_fraction": (0.0, 1.0, 10),
}
evaluator = "python"
entry = "main"
timeout_s = 10
memory_mb = 1024
preload = ["numpy"]
seed_file = "seed.py"
baselines = {
    "AlphaEvolve (2025)": {"sum_radii": 2.937945},
    "best open result": {"sum_radii": 2.939540},
}

N = 32


def evaluate(output):
    """Check the packing strictly and score it; never raises, whatever ``output`` is."""
    return check_circle_packing(output, N)
