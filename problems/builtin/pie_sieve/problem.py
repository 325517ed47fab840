"""PIE-style task (sieve): Count the primes up to n.

The seed is correct but slow; the objective is the instructions it executes (callgrind,
summed over hidden tests generated from a fixed seed). Held-out inputs, larger, are scored
once at the end. Ratios to the seed and to the seed at -O3 stand beside every result.
"""

from evoforge.evaluators.native import as_measured, generated_tests, measure_tools, seed_baselines_of

name = "pie_sieve"
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


def _case(rng, size):
    n = rng.randint(size // 2, size)
    sieve = bytearray([1]) * (n + 1)
    sieve[0:2] = b"\0\0"
    for i in range(2, int(n**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))
    return f"{n}\n", f"{sum(sieve)}\n"


tests = generated_tests(_case, seed=1, count=4, size=8000)
held_out_tests = generated_tests(_case, seed=2, count=2, size=20000)
evaluate = evaluate_held_out = as_measured
baselines = seed_baselines_of(__file__)
