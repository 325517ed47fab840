"""PIE-style task (sieve): Count the primes up to n.

The seed is correct but slow; the objective is the instructions it executes (callgrind,
summed over hidden tests generated from a fixed seed). Held-out inputs, larger, are scored
once at the end. Ratios to the seed and to the seed at -O3 stand beside every result.
"""

import random

name = "pie_sieve"
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
    return _cases(1, 4, 8000)


def held_out_tests() -> list[tuple[str, str]]:
    """Scored once, at the end, on the best program; larger than the tests."""
    return _cases(2, 2, 20000)


def evaluate(metrics):
    return metrics


def evaluate_held_out(metrics):
    return metrics


def baselines():
    from evoforge.evaluators.native import seed_baselines

    return seed_baselines(__file__)


def _case(rng, size):
    n = rng.randint(size // 2, size)
    sieve = bytearray([1]) * (n + 1)
    sieve[0:2] = b"\0\0"
    for i in range(2, int(n**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))
    return f"{n}\n", f"{sum(sieve)}\n"
