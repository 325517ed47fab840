"""PIE-style task (shortest_paths): distances from vertex 0 in a weighted directed graph.

Unreachable vertices print -1.
The seed is correct but slow; the objective is the instructions it executes (callgrind,
summed over hidden tests generated from a fixed seed). Held-out inputs, larger, are scored
once at the end. Ratios to the seed and to the seed at -O3 stand beside every result.
"""

import random

name = "pie_shortest_paths"
evaluator = "native"
language = "cpp"
seed_file = "seed.cpp"
measure = "callgrind"
objectives = {"instructions": "minimize"}
compile_flags = ["-O2", "-std=c++17"]
timeout_s = 120
options = {"test_timeout_s": 5}
held_out = [{"name": "held_out", "kwargs": {"tests": "held_out_tests"}}]
run_defaults = {"budget": 200}


def _cases(seed: int, count: int, size: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [_case(rng, size) for _ in range(count)]


def tests() -> list[tuple[str, str]]:
    """Hidden tests, generated from a fixed seed (the same on every host)."""
    return _cases(1, 4, 60)


def held_out_tests() -> list[tuple[str, str]]:
    """Scored once, at the end, on the best program; larger than the tests."""
    return _cases(2, 2, 120)


def evaluate(metrics):
    return metrics


def evaluate_held_out(metrics):
    return metrics


def baselines():
    from evoforge.evaluators.native import seed_baselines

    return seed_baselines(__file__)


def _case(rng, n):
    import heapq

    m = 4 * n
    edges = [(rng.randrange(n), rng.randrange(n), rng.randint(1, 100)) for _ in range(m)]
    adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for u, v, w in edges:
        adj[u].append((v, w))
    dist = [-1] * n
    heap = [(0, 0)]
    while heap:
        d, u = heapq.heappop(heap)
        if dist[u] != -1:
            continue
        dist[u] = d
        for v, w in adj[u]:
            if dist[v] == -1:
                heapq.heappush(heap, (d + w, v))
    text = f"{n} {m}\n" + "".join(f"{u} {v} {w}\n" for u, v, w in edges)
    return text, " ".join(map(str, dist)) + "\n"
