"""ParEVO-style task: connected components of irregular graphs, on every core.

The candidate is a C++ program (OpenMP, ``-fopenmp``; ``std::thread`` works too) that
generates a graph from one line of stdin (a power-law R-MAT graph or a road-like grid with
edges deleted, both counter-based so they can be generated in parallel) and prints its number of
components and a checksum of the min-id labelling. The seed is a correct, sequential BFS.

Cascade: ``race_check`` builds the candidate with ThreadSanitizer (and LLVM's Archer, which
tells it OpenMP's synchronisation) and runs it on small graphs; a data race ends the evaluation
(``runtime_error``, TSan's first report as the ``data_race`` artifact) before it is timed, so a
racy program never ranks. ``speed`` checks every test graph against the reference below and
times the candidate against the sequential seed (and the seed at ``-O3``) interleaved, on all
the host's cores (``evoforge devices`` says how many): the objective is ``speedup_vs_seed``.
Held-out graphs, larger and from other seeds, are scored once at the end.

The expected outputs come from a sequential reference written here in numpy (the same
generators; components by hooking to the smaller root and pointer jumping), not from the seed.
"""

# numpy is imported in the functions that use it: `evoforge problems` loads every spec to list
# it, and numpy's import would double that command's time.
import functools

from evoforge.evaluators.native import as_measured, libraries_missing, measure_tools

name = "graph_parallel"
evaluator = "native"
language = "cpp"
seed_file = "seed.cpp"
measure = "wall"
objectives = {"speedup_vs_seed": "maximize"}
compile_flags = ["-O2", "-std=c++17", "-fopenmp"]
requires = measure_tools(language, measure)  # `evoforge problems` names what is missing
timeout_s = 300
options = {"test_timeout_s": 20, "timing_repeats": 5, "timing_warmups": 1, "threads": "all"}
stages = [
    {
        "name": "race_check",
        "kwargs": {"tests": "race_tests", "measure": "none", "sanitize": "thread"},
        "evaluate": "as_measured",
    },
    {"name": "speed"},
]
held_out = [{"name": "held_out", "kwargs": {"tests": "held_out_tests"}}]
run_defaults = {"budget": 100}



def ready():
    """libomp and LLVM's Archer (the race-check stage's) are libraries, not commands."""
    return libraries_missing(openmp=True, sanitize=("thread",))


def _mix(x):
    """splitmix64's finaliser on a uint64 array (the seed's ``mix``; numpy wraps on overflow)."""
    import numpy as np
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def rmat(scale, m, seed):
    """The seed's R-MAT graph: ``(n, src, dst)``."""
    import numpy as np
    with np.errstate(over="ignore"):
        h = _mix(np.uint64(seed) * np.uint64(0x100000001B3) + np.arange(m, dtype=np.uint64))
        u = np.zeros(m, dtype=np.uint64)
        v = np.zeros(m, dtype=np.uint64)
        for level in range(scale):
            if level and level % 4 == 0:
                h = _mix(h)
            r = (h >> np.uint64(16 * (level % 4))) & np.uint64(0xFFFF)
            bu = r >= 49807
            bv = ((r >= 37355) & (r < 49807)) | (r >= 62259)
            u = (u << np.uint64(1)) | bu.astype(np.uint64)
            v = (v << np.uint64(1)) | bv.astype(np.uint64)
        mask = np.uint64((1 << scale) - 1)
        scramble = np.uint64(2654435761)
        src = ((u * scramble) & np.uint64(0xFFFFFFFF)) & mask
        dst = ((v * scramble) & np.uint64(0xFFFFFFFF)) & mask
    return 1 << scale, src.astype(np.int64), dst.astype(np.int64)


def road(width, height, seed):
    """The seed's road-like grid: ``(n, src, dst)``."""
    import numpy as np
    cells = width * height
    e = np.arange(2 * cells, dtype=np.uint64)
    with np.errstate(over="ignore"):
        keep = (_mix(np.uint64(seed) * np.uint64(0x100000001B3) + e) & np.uint64(0xFFFF)) < 36045
    cell = (e // np.uint64(2)).astype(np.int64)
    right = (e % np.uint64(2)) == 0
    x, y = cell % width, cell // width
    inside = np.where(right, x + 1 < width, y + 1 < height)
    chosen = keep & inside
    cell, right = cell[chosen], right[chosen]
    return cells, cell, np.where(right, cell + 1, cell + width)


def min_labels(n, src, dst):
    """Each vertex's smallest component member: hook every root to the smaller root across an
    edge, then jump pointers until every tree is a star (values only fall, so each component
    ends at its minimum)."""
    import numpy as np
    parent = np.arange(n, dtype=np.int64)
    while True:
        pu, pv = parent[src], parent[dst]
        differ = pu != pv
        if not differ.any():
            return parent
        low, high = np.minimum(pu, pv)[differ], np.maximum(pu, pv)[differ]
        np.minimum.at(parent, high, low)
        while True:
            jumped = parent[parent]
            if np.array_equal(jumped, parent):
                break
            parent = jumped


def expected(line):
    """The expected stdout of one input line (``rmat 18 2000000 1``)."""
    import numpy as np
    kind, a, b, seed = line.split()
    n, src, dst = (rmat if kind == "rmat" else road)(int(a), int(b), int(seed))
    label = min_labels(n, src, dst)
    weights = np.arange(n, dtype=np.int64) % 1024 + 1
    count = int(np.count_nonzero(label == np.arange(n)))
    checksum = int((label.astype(np.uint64) * weights.astype(np.uint64)).sum(dtype=np.uint64))
    return f"{count}\n{checksum}\n"


def _cases(lines):
    return [(f"{line}\n", expected(line)) for line in lines]


@functools.cache
def tests():
    """Graphs checked and timed on every evaluation: two power-law, two road-like."""
    return _cases(
        ["rmat 18 1500000 11", "road 800 800 12", "rmat 17 2000000 13", "road 400 1600 14"]
    )


@functools.cache
def race_tests():
    """Small graphs for the ThreadSanitizer build (it runs programs 5-15x slower)."""
    return _cases(["rmat 12 20000 21", "road 60 60 22", "rmat 3 5 23", "road 1 7 24"])


@functools.cache
def held_out_tests():
    """Larger graphs from other seeds, scored once at the end."""
    return _cases(["rmat 19 4000000 31", "road 1200 1200 32", "rmat 16 3000000 33"])


evaluate = evaluate_held_out = as_measured
