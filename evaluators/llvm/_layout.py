"""Code layout: CFGs with real profiles from BOLT, and the Ext-TSP score of an order.

Profiles are collected once (:func:`prepare_profile`): a real program (lz4 and the evoforge
workload) is built with ``clang-19 -O2 -no-pie -fuse-ld=lld -Wl,--emit-relocs``, instrumented
with ``llvm-bolt-19 -instrument`` (the runtime library given explicitly: Debian's default
path is wrong), run, and then ``llvm-bolt-19 -data=... -reorder-blocks=ext-tsp
-print-normalized -print-reordered -print-cache-metrics`` prints every profiled function's
blocks (sizes from their input offsets, execution counts, successors with branch counts), the
original order and BOLT's own ext-tsp order for the same profile. :func:`parse_bolt` reads
that text; the result is cached as JSON beside the corpora.

:func:`ext_tsp` is the Ext-TSP score with LLVM's constants (``CodeLayout.cpp``): block
addresses are prefix sums of sizes in the given order; an edge ``s -> d`` with count ``c``
scores ``c`` for a fall-through (``1.05 c`` when ``s`` has one successor), ``0.1 c (1 -
D/1024)`` for a forward jump of ``D <= 1024`` bytes and ``0.1 c (1 - D/640)`` for a backward
one of ``D <= 640`` bytes, 0 beyond. Cost: one pass over the edges (a few µs per function).
"""

from __future__ import annotations

import re
from typing import Any

FALLTHROUGH_COND, FALLTHROUGH_UNCOND = 1.0, 1.05
FORWARD_WEIGHT, FORWARD_DISTANCE = 0.1, 1024
BACKWARD_WEIGHT, BACKWARD_DISTANCE = 0.1, 640

_FUNCTION = re.compile(r'^Binary Function "(?P<name>[^"]+)" after (?P<stage>[\w -]+) \{$')
_BLOCK = re.compile(r"^(?P<label>\.\S+) \(\d+ instructions, align : \d+\)$")
_INSTRUCTION = re.compile(r"^\s+(?P<offset>[0-9a-f]{8}):\s")
_SUCCESSORS = re.compile(r"^\s+Successors: (?P<list>.*)$")
_EDGE = re.compile(r"(?P<label>\.\S+) \(mispreds: \d+, count: (?P<count>\d+)\)")
_TSP = re.compile(r"TSP score: [\d.]+% \((?P<score>\d+) out of (?P<total>\d+)\)")


def ext_tsp(
    sizes: list[int], edges: list[list[int]], order: list[int], successors: list[int]
) -> float:
    """The Ext-TSP score of one function laid out in ``order``.

    Args:
        sizes: bytes of each block.
        edges: ``[source, destination, count]`` triples (block indices).
        order: a permutation of the block indices (validated elsewhere).
        successors: how many successors each block has (1: an unconditional fall-through).
    """
    address = [0] * len(sizes)
    at = 0
    for block in order:
        address[block] = at
        at += sizes[block]
    score = 0.0
    for source, target, count in edges:
        if count <= 0:
            continue
        end = address[source] + sizes[source]
        if end == address[target]:
            weight = FALLTHROUGH_UNCOND if successors[source] == 1 else FALLTHROUGH_COND
            score += weight * count
        elif address[target] > end:
            distance = address[target] - end
            if distance <= FORWARD_DISTANCE:
                score += FORWARD_WEIGHT * (1 - distance / FORWARD_DISTANCE) * count
        else:
            distance = end - address[target]
            if distance <= BACKWARD_DISTANCE:
                score += BACKWARD_WEIGHT * (1 - distance / BACKWARD_DISTANCE) * count
    return score


def check_order(order: Any, blocks: int) -> str:
    """Why ``order`` is not a valid layout of ``blocks`` blocks ("" when it is)."""
    if not isinstance(order, list) or not all(
        isinstance(b, int) and not isinstance(b, bool) for b in order
    ):
        return f"expected a list of block indices (ints), got {type(order).__name__}"
    if sorted(order) != list(range(blocks)):
        missing = sorted(set(range(blocks)) - set(order))[:5]
        return (
            f"not a permutation of 0..{blocks - 1} ({len(order)} entries"
            + (f"; missing {missing}" if missing else "; repeats or out-of-range indices")
            + ")"
        )
    if order[0] != 0:
        return f"the entry block 0 must come first, found {order[0]} first"
    return ""


def parse_bolt(text: str) -> dict[str, Any]:
    """Profiled functions of BOLT's ``-print-normalized -print-reordered`` output.

    Returns ``{"functions": [...], "tsp_score": int | None}``; each function is
    ``{"name", "sizes", "counts", "edges", "successors", "bolt"}`` with blocks in their
    original order (index 0 is the entry) and ``bolt`` BOLT's order as indices. Functions
    whose blocks never ran, or with one block, are left out (every order scores the same).
    """
    normalized: dict[str, dict[str, Any]] = {}
    reordered: dict[str, list[str]] = {}
    current: dict[str, Any] | None = None
    stage = ""
    for line in text.splitlines():
        if match := _FUNCTION.match(line):
            stage = match["stage"]
            current = {"name": match["name"], "blocks": [], "size": 0, "layout": []}
            (normalized if stage == "normalize CFG" else {}).setdefault(match["name"], current)
            if stage == "reorder-blocks":
                reordered[match["name"]] = current["layout"]
            continue
        if current is None:
            continue
        stripped = line.strip()
        if stripped.startswith("Size        :"):
            current["size"] = int(stripped.split(":")[1], 16)
        elif stripped.startswith("BB Layout   :"):
            current["layout"].extend(s.strip() for s in stripped.split(":", 1)[1].split(","))
        elif match := _BLOCK.match(line):
            current["blocks"].append(
                {"label": match["label"], "offset": None, "count": 0, "succ": []}
            )
        elif current["blocks"] and stripped.startswith("Exec Count :"):
            current["blocks"][-1]["count"] = int(stripped.split(":")[1])
        elif current["blocks"] and (match := _INSTRUCTION.match(line)):
            if current["blocks"][-1]["offset"] is None:
                current["blocks"][-1]["offset"] = int(match["offset"], 16)
        elif current["blocks"] and (match := _SUCCESSORS.match(line)):
            current["blocks"][-1]["succ"] = [
                (m["label"], int(m["count"])) for m in _EDGE.finditer(match["list"])
            ]
        elif line.startswith("End of Function"):
            current = None
    functions = [
        f
        for name, raw in normalized.items()
        if (f := _function(raw, reordered.get(name, []))) is not None
    ]
    tsp = _TSP.search(text)
    return {"functions": functions, "tsp_score": int(tsp["score"]) if tsp else None}


def _function(raw: dict[str, Any], bolt_labels: list[str]) -> dict[str, Any] | None:
    blocks = [b for b in raw["blocks"] if b["offset"] is not None]
    if len(blocks) < 2 or not any(b["count"] for b in blocks):
        return None
    blocks.sort(key=lambda b: b["offset"])
    if blocks[0]["label"] != raw["blocks"][0]["label"]:
        return None  # the entry is not the first block by address: leave such a function out
    index = {b["label"]: i for i, b in enumerate(blocks)}
    ends = [b["offset"] for b in blocks[1:]] + [raw["size"]]
    sizes = [max(0, end - b["offset"]) for b, end in zip(blocks, ends, strict=True)]
    edges = [
        [i, index[label], count]
        for i, b in enumerate(blocks)
        for label, count in b["succ"]
        if label in index
    ]
    bolt = [index[label] for label in bolt_labels if label in index]
    bolt += [i for i in range(len(blocks)) if i not in set(bolt)]
    return {
        "name": raw["name"],
        "sizes": sizes,
        "counts": [b["count"] for b in blocks],
        "edges": edges,
        "successors": [len(b["succ"]) for b in blocks],
        "bolt": bolt,
    }
