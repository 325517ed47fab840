"""Inline for size: decide, for every call site LLVM 19 considers, whether to inline it.

The candidate defines ``decide(features) -> bool``. ``opt-19 -passes='default<Oz>'`` asks it
about each call site of real C libraries (compression code fetched from PyPI sdists) through
LLVM's interactive ML-inliner channel; True inlines the callee there, False keeps the call.
The program is then compiled with ``llc-19`` and scored by the bytes of machine code
(``.text``) it produced, against stock ``-Oz`` (LLVM's own cost model) on the same code.

``features`` is a dict of integers, one per name (LLVM's inline-cost features). The most
useful, with typical ranges seen on this corpus:

- ``cost_estimate``: LLVM's estimate of the size cost of inlining (-10000..5000; below 0
  means inlining shrinks the code, e.g. a call to a tiny function);
- ``threshold``: LLVM's size budget for this site at -Oz (usually 5..250; stock -Oz inlines
  exactly when ``cost_estimate < threshold``, which is what the seed does);
- ``callee_users``: how many call sites the callee has (1 means this is the only one: if it
  is also static, inlining deletes the callee's body);
- ``last_call_to_static_bonus``: nonzero when this is the last call of a static function;
- ``callee_basic_block_count``, ``node_count``, ``edge_count``: sizes of the callee and of
  the call graph; ``caller_basic_block_count``, ``caller_users``;
- ``callsite_height``: depth of the call site in the call graph (0 = leaf calls);
- ``nr_ctant_params``, ``constant_args``: arguments that are constants at this site (they
  let the inlined body simplify);
- ``simplified_instructions``, ``dead_blocks``, ``sroa_savings``, ``load_elimination``:
  what LLVM expects to simplify away after inlining;
- ``call_penalty``, ``call_argument_setup``, ``lowered_call_arg_setup``, ``num_loops``,
  ``is_multiple_blocks``, ``nested_inlines``, ``nested_inline_cost_estimate``,
  ``is_callee_avail_external``, ``is_caller_avail_external``, ``cold_cc_penalty``,
  ``jump_table_penalty``, ``case_cluster_penalty``, ``switch_penalty``,
  ``switch_default_dest_penalty``, ``unsimplified_common_instructions``,
  ``constant_offset_ptr_args``, ``callsite_cost``, ``load_relative_intrinsic``,
  ``indirect_call_penalty``, ``sroa_losses``, ``caller_conditionally_executed_blocks``,
  ``callee_conditionally_executed_blocks``.

Example: ``{"cost_estimate": 35, "threshold": 5, "callee_users": 3, ...}`` -> stock says
False (35 >= 5). Return a bool for every call; anything else (None, a string, 2) fails the
candidate, as does raising, or taking more than 1 s for one decision. There are about 1,900
decisions per evaluation of the training code.

Stages: ``quick`` compiles one small library (a few seconds) and stops policies more than 10 %
larger than stock there; ``full`` compiles all training libraries and also counts the
instructions a workload built from them executes (callgrind), the second objective. Knobs
(``NAME = value  # knob: float LOW..HIGH``) are tuned after each evaluation.
"""

from __future__ import annotations

from evoforge.evaluators.llvm import REQUIRES, corpus_ready, measure_stock, setup_corpora

name = "llvm_inlining"
evaluator = "llvm"
entry = "decide"
objectives = {"text_bytes": "minimize", "instructions": "minimize"}
descriptors = {"inlined_share": (0.0, 0.5, 10)}
options = {"llvm_task": "inlining", "decision_timeout_s": 1.0}
timeout_s = 240
memory_mb = 1024
requires = {**REQUIRES, "valgrind": "apt-get install -y valgrind"}
stages = [
    {
        "name": "quick",
        "kwargs": {"corpus": "quick"},
        "timeout_s": 90,
        "threshold": {"metric": "text_vs_stock", "max": 1.10},
    },
    {"name": "full", "kwargs": {"corpus": "train", "instructions": True}, "timeout_s": 300},
]
# Scored once on the best program at the end of a session; never shown to the model.
held_out = [{"name": "held_out", "kwargs": {"corpus": "held_out"}, "timeout_s": 300}]
tuning = {"trials": 3, "stage": "quick", "metric": "text_bytes", "direction": "minimize"}

_TRAIN, _QUICK, _HELD_OUT = "train", "quick", "held_out"


def setup():
    """Fetch the corpora's sdists from PyPI and compile them to bitcode (idempotent)."""
    setup_corpora()
    for corpus, instructions in ((_QUICK, False), (_TRAIN, True), (_HELD_OUT, False)):
        measure_stock("inlining", corpus, instructions=instructions)
    return "corpora ready"


def ready():
    return corpus_ready()


def baselines():
    """Stock -Oz on the training and held-out code, measured with this host's LLVM."""
    train = measure_stock("inlining", _TRAIN, instructions=True)
    held_out = measure_stock("inlining", _HELD_OUT)
    return {
        "stock -Oz": {
            "text_bytes": train["text_bytes"],
            "instructions": train["instructions"],
            "held_out.text_bytes": held_out["text_bytes"],
        }
    }


def _score(measurements, corpus):
    stock = measure_stock("inlining", corpus)["text_bytes"]
    size = measurements["text_bytes"]
    decisions = max(1, measurements["decisions"])
    return {
        "text_bytes": size,
        "text_vs_stock": size / stock,
        "decisions": measurements["decisions"],
        "inlined_share": measurements["inlined"] / decisions,
        "llvm_s": measurements["llvm_s"],
        "policy_s": measurements["policy_s"],
    }


def evaluate_quick(measurements):
    return _score(measurements, _QUICK)


def evaluate(measurements):
    metrics = _score(measurements, _TRAIN)
    metrics["instructions"] = measurements["instructions"]
    return metrics


def evaluate_held_out(measurements):
    return _score(measurements, _HELD_OUT)
