"""FunSearch's online bin packing: evolve the priority function that picks a bin for each item.

Items arrive one at a time; each goes into an open bin that has room, or into a new bin only
when none has room. The evolved ``priority(item, bins)`` scores the open bins the item fits in
(``bins`` holds their remaining capacities) and the highest score gets it. The frozen part of
the program runs that loop on every instance it is given and returns each item's bin.

Instances are generated with fixed seeds (:mod:`evoforge.problems.classic`): OR1-OR4 style
(capacity 150, sizes uniform on 20..100; 120 to 1000 items) and Weibull 5k (capacity 100, 5000
items of Weibull(3, 45) sizes), a training set and a held-out set from other seeds. This
evaluator checks every packing strictly (one bin per item, no bin overfilled, bins opened in
order and only when no open bin fits) in a process the candidate cannot reach, then scores
the excess bins over the L1 lower bound ``ceil(sum of sizes / capacity)``, in percent.

Objectives (all minimised): ``excess_pct``, the mean over the five training datasets (primary),
and ``weibull_5k_excess_pct`` and ``or3_excess_pct``, the datasets FunSearch's paper reports
(reported beside its published figures). Metrics also hold every dataset's excess, bins used,
and the held-out set's (``heldout_excess_pct``), which plays no part in selection.

Baselines: first-fit and best-fit measured on the same instances at the start of each session,
and FunSearch's published figures (Weibull 5k: best-fit 3.98 %, FunSearch 0.68 %; OR3:
best-fit 5.37 %, FunSearch 3.11 %), which were measured on FunSearch's own instances: shown
beside ours for orientation, not as a like-for-like comparison.
"""

import json
from pathlib import Path

from evoforge.problems.classic import best_fit, excess, excess_of, first_fit

name = "bin_packing"
objectives = {
    "excess_pct": "minimize",
    "weibull_5k_excess_pct": "minimize",
    "or3_excess_pct": "minimize",
}
descriptors = {
    # OR-style (uniform sizes) versus Weibull: heuristics that specialise keep separate cells.
    "or_excess_pct": (3.0, 9.0, 8),
    "weibull_5k_excess_pct": (0.0, 6.0, 8),
}
# Each training dataset's excess, for parent selection per dataset (selection = "pareto_instances")
instances = {"metric": "dataset_excess_pct", "direction": "minimize"}
evaluator = "python"
entry = "main"
timeout_s = 60
memory_mb = 1024
preload = ["numpy"]
seed_file = "seed.py"
PUBLISHED = {
    "best-fit, published (FunSearch paper)": {"weibull_5k_excess_pct": 3.98, "or3_excess_pct": 5.37},
    "FunSearch, published": {"weibull_5k_excess_pct": 0.68, "or3_excess_pct": 3.11},
}

# The instances of evoforge.problems.classic.datasets(), stored so that loading the spec (every
# `evoforge problems`) does not import numpy; tests/problems/test_bin_packing.py checks they are
# the generator's.
_INSTANCES = json.loads((Path(__file__).parent / "instances.json").read_text())
TRAINING = _INSTANCES["training"]
HELD_OUT = _INSTANCES["held_out"]
# The candidate's main() gets the instances (it has to pack them); the scorer keeps its own
# copy of them, so a candidate that packs other items is caught.
stages = [{"name": "pack", "kwargs": {"training": TRAINING, "held_out": HELD_OUT}}]


def evaluate(output):
    """Check every packing and score the excess over L1 (see the module docstring)."""
    if not isinstance(output, dict):
        return _invalid(f"main() must return a dict with 'training' and 'held_out', not {type(output).__name__}")
    metrics = {}
    for part, sets, prefix in (("training", TRAINING, ""), ("held_out", HELD_OUT, "heldout_")):
        packed = output.get(part)
        if not isinstance(packed, dict):
            return _invalid(f"main()[{part!r}] must map each dataset to its packings")
        for name, dataset in sets.items():
            pct, used, error = excess(dataset, packed.get(name), name=f"{part} {name}")
            if error:
                return _invalid(error)
            metrics[f"{prefix}{name}_excess_pct"] = pct
            metrics[f"{prefix}{name}_bins"] = used
    names = list(TRAINING)
    metrics["excess_pct"] = sum(metrics[f"{n}_excess_pct"] for n in names) / len(names)
    metrics["heldout_excess_pct"] = sum(metrics[f"heldout_{n}_excess_pct"] for n in names) / len(
        names
    )
    metrics["or_excess_pct"] = sum(metrics[f"{n}_excess_pct"] for n in names if n != "weibull_5k") / 4
    metrics["dataset_excess_pct"] = {n: metrics[f"{n}_excess_pct"] for n in names}
    return metrics


def baselines():
    """First-fit and best-fit on the training instances (about a second each), and the
    published figures (constants, measured on FunSearch's own instances)."""
    measured = dict(PUBLISHED)
    for label, priority in (("first-fit (measured here)", first_fit), ("best-fit (measured here)", best_fit)):
        pct = excess_of(priority, TRAINING)
        measured[label] = {
            "excess_pct": sum(pct.values()) / len(pct),
            "weibull_5k_excess_pct": pct["weibull_5k"],
            "or3_excess_pct": pct["or3"],
        }
    return measured


def _invalid(error):
    return {"correct": False, "error": error}
