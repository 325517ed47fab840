"""Scores a scheduling rule on fixed instances of single-machine weighted tardiness.

``combined_score`` is the mean over the instances of (EDD's cost + 1) / (the program's cost +
1): 1.0 matches earliest-due-date ordering, higher is better. A program whose order is not a
permutation of the jobs scores 0.
"""

import importlib.util
import random

INSTANCES = 12
JOBS = 25


def _instances():
    out = []
    for k in range(INSTANCES):
        rng = random.Random(1000 + k)
        jobs = [(rng.randint(1, 10), rng.randint(1, 20), 0.0) for _ in range(JOBS)]
        total = sum(d for _, d, _ in jobs)
        jobs = [(w, d, rng.uniform(0.2, 0.8) * total) for w, d, _ in jobs]
        out.append(jobs)
    return out


def _cost(jobs, order):
    now, cost = 0.0, 0.0
    for j in order:
        weight, duration, due = jobs[j]
        now += duration
        cost += weight * max(0.0, now - due)
    return cost


def _load(program_path):
    spec = importlib.util.spec_from_file_location("candidate_program", program_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def evaluate(program_path):
    module = _load(program_path)
    ratios, costs = [], []
    for jobs in _instances():
        order = [int(j) for j in module.run_schedule(list(jobs))]
        if sorted(order) != list(range(len(jobs))):
            return {"combined_score": 0.0, "valid": 0.0, "error": "not a permutation of the jobs"}
        cost = _cost(jobs, order)
        edd = _cost(jobs, sorted(range(len(jobs)), key=lambda j: jobs[j][2]))
        ratios.append((edd + 1.0) / (cost + 1.0))
        costs.append(cost)
    return {
        "combined_score": sum(ratios) / len(ratios),
        "mean_cost": sum(costs) / len(costs),
        "valid": 1.0,
    }
