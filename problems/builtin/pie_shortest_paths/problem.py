"""PIE-style task (shortest_paths): distances from vertex 0 in a weighted directed graph.

Unreachable vertices print -1.
The seed is correct but slow; the objective is the instructions it executes (callgrind,
summed over hidden tests generated from a fixed seed). Held-out inputs, larger, are scored
once at the end. Ratios to the seed and to the seed at -O3 stand beside every result.
"""

from evoforge.evaluators.native import as_measured, generated_tests, measure_tools, seed_baselines_of

name = "pie_shortest_paths"
evaluator = "native"
language = "cpp"
seed_file = "seed.cpp"
measure = "callgrind"
objectives = {"instructions": "minimize"}
instances = {"metric": "test_instructions", "direction": "minimize"}  # per test
compile_flags = ["-O2", "-std=c++17"]
requires = measure_tools(language, measure)  # `evoforge problems` names what is missing
timeout_s = 120
options = {"test_timeout_s": 5}
held_out = [{"name": "held_out", "kwargs": {"tests": "held_out_tests"}}]
run_defaults = {"budget": 200}


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


tests = generated_tests(_case, seed=1, count=4, size=60)
held_out_tests = generated_tests(_case, seed=2, count=2, size=120)
evaluate = evaluate_held_out = as_measured
baselines = seed_baselines_of(__file__)
