"""PIE-style task (knapsack): 0/1 knapsack: the best total value within a weight capacity.

The seed is correct but slow; the objective is the instructions it executes (callgrind,
summed over hidden tests generated from a fixed seed). Held-out inputs, larger, are scored
once at the end. Ratios to the seed and to the seed at -O3 stand beside every result.
"""

from evoforge.evaluators.native import as_measured, generated_tests, measure_tools, seed_baselines_of

name = "pie_knapsack"
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
    items = [(rng.randint(1, 50), rng.randint(1, 100)) for _ in range(n)]
    capacity = sum(w for w, _ in items) // 2
    best = [0] * (capacity + 1)
    for w, v in items:
        for c in range(capacity, w - 1, -1):
            best[c] = max(best[c], best[c - w] + v)
    text = f"{n} {capacity}\n" + "".join(f"{w} {v}\n" for w, v in items)
    return text, f"{best[capacity]}\n"


tests = generated_tests(_case, seed=1, count=4, size=14)
held_out_tests = generated_tests(_case, seed=2, count=2, size=16)
evaluate = evaluate_held_out = as_measured
baselines = seed_baselines_of(__file__)
