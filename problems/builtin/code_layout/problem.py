"""Lay out basic blocks: order each function's blocks so hot paths fall through.

The candidate defines ``decide(function) -> list[int]``, called once for each function of a
real program (lz4 compressing and decompressing data, built with clang-19 -O2) that ran in a
profile collected with BOLT's instrumentation. ``function`` is a dict:

- ``name``: the function's symbol, e.g. ``"LZ4_compress_generic_validated"``;
- ``sizes``: bytes of machine code of each block (block 0 is the entry; 1..700 bytes);
- ``counts``: how many times each block ran in the profile (0..millions);
- ``edges``: ``[source, destination, count]`` for every branch or fall-through between
  blocks, with how many times it was taken (e.g. ``[3, 7, 12000]``).

Return the blocks' order: a permutation of ``0 .. len(sizes) - 1`` with 0 first (anything
else fails the candidate). Functions have 2..300 blocks; there are about 30 per evaluation,
and each answer must come within 1 s.

Score (maximized): Ext-TSP, LLVM's model of instruction-cache-friendly layout, summed over
functions. Blocks get addresses from their sizes in your order; a taken edge with count c
scores c if its destination starts right where its source ends (a fall-through; 1.05 c when
the source has one successor), 0.1 c (1 - D/1024) for a forward jump of D <= 1024 bytes,
0.1 c (1 - D/640) for a backward jump of D <= 640 bytes, nothing for longer jumps. So: chain
hot edges into fall-throughs, keep hot loops short and close, push cold blocks away.
Reported beside it: the original (compiler's) order and BOLT's own ext-tsp layout on the same
profile. At the end of a run the best layout is applied for real (the program rebuilt with
it) and its instruction-cache misses are measured.
"""

from __future__ import annotations

from evoforge.evaluators.llvm import REQUIRES, corpus_ready, load_profile, prepare_profile

name = "code_layout"
evaluator = "llvm"
entry = "decide"
objectives = {"ext_tsp": "maximize"}
descriptors = {"fallthrough_share": (0.0, 1.0, 10)}
options = {"llvm_task": "code_layout", "decision_timeout_s": 1.0}
timeout_s = 60
memory_mb = 1024
requires = {
    **REQUIRES,
    "llvm-bolt-19": REQUIRES["clang-19"],
    "valgrind": "apt-get install -y valgrind",
}
stages = [{"name": "ext_tsp", "timeout_s": 60}]
# Once per session, the best program's layout is applied for real: lz4 is rebuilt with its
# block orders (clang's basic-block sections; see evoforge.evaluators.llvm._profile) and run
# under cachegrind, against the original binary and BOLT's on the same profile.
held_out = [{"name": "applied", "kwargs": {"apply": True}, "timeout_s": 600}]


def setup():
    """Build and profile the program once (clang-19, BOLT instrumentation, a workload run)."""
    return str(prepare_profile())


def ready():
    try:
        load_profile()
    except FileNotFoundError as exc:
        return str(exc)
    return corpus_ready(["lz4"])


def baselines():
    """The original order and BOLT's ext-tsp order, scored on the cached profile."""
    profile = load_profile()
    functions = profile["functions"]
    return {
        "original order": {
            "ext_tsp": sum(f["original_score"] for f in functions),
            "applied.i1_misses": profile["i1_misses_original"],
        },
        "BOLT ext-tsp": {
            "ext_tsp": sum(f["bolt_score"] for f in functions),
            "applied.i1_misses": profile["i1_misses_bolt"],
        },
    }


def evaluate(measurements):
    score = measurements["ext_tsp"]
    return {
        "ext_tsp": score,
        "vs_original": score / measurements["original"],
        "vs_bolt": score / measurements["bolt"],
        "fallthrough_share": min(1.0, score / max(1.0, 1.05 * _total_count())),
        "functions": measurements["functions"],
        "policy_s": measurements["policy_s"],
    }


def evaluate_applied(measurements):
    """The best layout applied for real: I-cache misses of the rebuilt program."""
    return {
        "i1_misses": measurements["i1_misses"],
        "functions_applied": measurements["functions_applied"],
        "ext_tsp": measurements["ext_tsp"],
    }


def _total_count():
    return sum(c for f in load_profile()["functions"] for _, _, c in f["edges"])
