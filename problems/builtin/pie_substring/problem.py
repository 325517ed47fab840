"""PIE-style task (substring): Count the (overlapping) occurrences of a pattern in a text.

The seed is correct but slow; the objective is the instructions it executes (callgrind,
summed over hidden tests generated from a fixed seed). Held-out inputs, larger, are scored
once at the end. Ratios to the seed and to the seed at -O3 stand beside every result.
"""

from evoforge.evaluators.native import as_measured, generated_tests, measure_tools, seed_baselines_of

name = "pie_substring"
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
    text = "".join(rng.choice("ab") for _ in range(n))
    pattern = "".join(rng.choice("ab") for _ in range(rng.randint(3, 12)))
    count = sum(1 for i in range(len(text) - len(pattern) + 1) if text.startswith(pattern, i))
    return f"{text}\n{pattern}\n", f"{count}\n"


tests = generated_tests(_case, seed=1, count=4, size=4000)
held_out_tests = generated_tests(_case, seed=2, count=2, size=12000)
evaluate = evaluate_held_out = as_measured
baselines = seed_baselines_of(__file__)
