"""Register allocation priority: decide in which order LLVM's allocator assigns live ranges.

The candidate defines ``decide(features) -> float``. ``llc-19``'s greedy register allocator
asks it for the priority of every live range (a virtual register's lifetime) it puts in its
queue, through LLVM 19's interactive priority-advisor channel; bigger priorities are
allocated first (the value is stored as an unsigned 32-bit number: return 0 <= p < 2**32).
The code is real C libraries (compression code fetched from PyPI sdists) already optimized
by stock ``-Oz``; the score is the bytes of machine code (``.text``) produced (spills and
copies cost bytes), against stock ``llc`` on the same code, and the instructions a workload
built from it executes (callgrind).

``features`` has three numbers:

- ``li_size``: the live range's size in instruction slots (1..100000; big ranges span many
  instructions or blocks);
- ``stage``: the range's stage in the allocator: 0 new, 1 assign (first try), 2 split (a
  piece of a range that was split), 3 split2, 4 spill, 5 done;
- ``weight``: its spill weight (0..~1, ``inf`` for ranges that must not be spilled): how
  costly spilling it would be, from its uses and loop depth.

Example: ``{"li_size": 240, "stage": 1, "weight": 0.0047}``. LLVM's own rule puts ranges in
their first stage before split ones, global (multi-block) ranges before local ones, and
larger ranges first; the seed approximates it. About 2,000 decisions on the quick corpus,
15,000 on the training corpus; each must come within 1 s.
"""

from __future__ import annotations

from evoforge.evaluators.llvm import REQUIRES, corpus_ready, measure_stock, setup_corpora

name = "llvm_regalloc_priority"
evaluator = "llvm"
entry = "decide"
objectives = {"text_bytes": "minimize", "instructions": "minimize"}
options = {"llvm_task": "regalloc_priority", "decision_timeout_s": 1.0}
timeout_s = 300
memory_mb = 1024
requires = {**REQUIRES, "valgrind": "apt-get install -y valgrind"}
stages = [
    {
        "name": "quick",
        "kwargs": {"corpus": "quick"},
        "timeout_s": 120,
        "threshold": {"metric": "text_vs_stock", "max": 1.10},
    },
    {"name": "full", "kwargs": {"corpus": "train", "instructions": True}, "timeout_s": 400},
]
held_out = [{"name": "held_out", "kwargs": {"corpus": "held_out"}, "timeout_s": 400}]
tuning = {"trials": 3, "stage": "quick", "metric": "text_bytes", "direction": "minimize"}

_TASK = "regalloc_priority"


def setup():
    """Fetch the corpora from PyPI, compile them, measure stock llc once (idempotent)."""
    setup_corpora()
    for corpus, instructions in (("quick", False), ("train", True), ("held_out", False)):
        measure_stock(_TASK, corpus, instructions=instructions)
    return "corpora ready"


def ready():
    return corpus_ready()


def baselines():
    train = measure_stock(_TASK, "train", instructions=True)
    held_out = measure_stock(_TASK, "held_out")
    return {
        "stock llc": {
            "text_bytes": train["text_bytes"],
            "instructions": train["instructions"],
            "held_out.text_bytes": held_out["text_bytes"],
        }
    }


def _score(measurements, corpus):
    stock = measure_stock(_TASK, corpus)["text_bytes"]
    return {
        "text_bytes": measurements["text_bytes"],
        "text_vs_stock": measurements["text_bytes"] / stock,
        "decisions": measurements["decisions"],
        "llvm_s": measurements["llvm_s"],
        "policy_s": measurements["policy_s"],
    }


def evaluate_quick(measurements):
    return _score(measurements, "quick")


def evaluate(measurements):
    return {**_score(measurements, "train"), "instructions": measurements["instructions"]}


def evaluate_held_out(measurements):
    return _score(measurements, "held_out")
