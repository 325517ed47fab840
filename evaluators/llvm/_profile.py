"""The code-layout profile (prepared once) and layouts applied to the real program.

:func:`prepare_profile` builds lz4 with the evoforge workload (``clang-19 -O2 -no-pie
-fuse-ld=lld -Wl,--emit-relocs -fbasic-block-address-map``), instruments it with
``llvm-bolt-19 -instrument`` (the runtime library given explicitly: Debian's default path is
wrong), runs it, and asks BOLT for the CFGs, the original order and its own ext-tsp order
(``-print-normalized -print-reordered``); it also records which of the compiler's machine
basic block (from the ``.llvm_bb_addr_map`` section) each BOLT block is, and counts the
I-cache misses of the original and BOLT-optimized binaries under cachegrind. Everything is
cached as ``cfg.json`` (about 30 s of work the first time, nothing afterwards).

:func:`apply_layout` applies orders for real: stock BOLT 19 has no option to take a given
block order, so the orders go to the compiler instead, as Propeller does: each function's
BOLT blocks become their machine basic blocks, listed in the new order in a
``-fbasic-block-sections=list=`` file, and lz4 is rebuilt and run under cachegrind. Functions
whose blocks do not map one-to-one onto machine blocks (BOLT split or merged some) keep the
compiler's order (the result says how many were applied).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from evoforge.evaluators.llvm._corpus import (
    WORKLOADS,
    cache_dir,
    library_files,
    setup_corpora,
)
from evoforge.evaluators.llvm._layout import ext_tsp, parse_bolt
from evoforge.evaluators.llvm._tools import BOLT_RUNTIME, tool

VERSION = 2
CACHEGRIND_I1 = "--I1=4096,2,64"
"""A 4 KiB I1 cache: lz4's hot code fits a real 32 KiB one, so misses would not tell layouts
apart; a smaller simulated cache shows what layout does to a working set under pressure."""
_MISSES = re.compile(r"I1\s+misses:\s+([\d,]+)")


def profile_dir(cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / "layout" / "lz4"


def load_profile(cache: Path | None = None) -> dict[str, Any]:
    """The cached profile (see :func:`prepare_profile`).

    Raises:
        FileNotFoundError: it was never prepared (the message says how).
    """
    path = profile_dir(cache) / "cfg.json"
    try:
        profile = json.loads(path.read_text())
    except (OSError, ValueError):
        profile = {}
    if profile.get("version") != VERSION:
        raise FileNotFoundError(
            f"no layout profile at {path}; run `evoforge problems setup code_layout`"
        )
    return profile


def prepare_profile(cache: Path | None = None, *, log: Any = print) -> Path:
    """Build, profile and cache (once); returns the profile's folder."""
    folder = profile_dir(cache)
    try:
        load_profile(cache)
        return folder
    except FileNotFoundError:
        pass
    setup_corpora(["lz4"], cache)
    folder.mkdir(parents=True, exist_ok=True)
    prog, instr, fdata = folder / "prog", folder / "prog.instr", folder / "prof.fdata"
    log("evoforge: building lz4 with -Wl,--emit-relocs and profiling it with BOLT")
    _build(prog, None, cache)
    # BOLT resolves this option against its own library folder: give it relative to
    # /usr/lib, where Debian's llvm-19 lives (an absolute path gets /usr/lib prepended).
    runtime = BOLT_RUNTIME.removeprefix("/usr/lib/")
    _run([tool("llvm-bolt-19"), str(prog), "-instrument",
          f"-runtime-instrumentation-lib={runtime}", f"-instrumentation-file={fdata}",
          "-o", str(instr)])  # fmt: skip
    _run([str(instr)], cwd=folder)
    text = _run([tool("llvm-bolt-19"), str(prog), f"-data={fdata}", "-reorder-blocks=ext-tsp",
                 "-print-normalized", "-print-reordered", "-print-cache-metrics",
                 "-o", str(folder / "prog.bolt")])  # fmt: skip
    (folder / "bolt.log").write_text(text)
    parsed = parse_bolt(text)
    machine = _machine_blocks(prog)
    for function in parsed["functions"]:
        identity = list(range(len(function["sizes"])))
        function["original_score"] = ext_tsp(
            function["sizes"], function["edges"], identity, function["successors"]
        )
        function["bolt_score"] = ext_tsp(
            function["sizes"], function["edges"], function["bolt"], function["successors"]
        )
        symbol = function["name"].split("/")[0]  # BOLT writes a local symbol as name/1(*2)
        function["machine_blocks"] = _map(function, machine.get(symbol))
    parsed["i1_misses_original"] = i1_misses(prog)
    parsed["i1_misses_bolt"] = i1_misses(folder / "prog.bolt")
    parsed["version"] = VERSION
    (folder / "cfg.json").write_text(json.dumps(parsed))
    return folder


def apply_layout(orders: dict[str, list[int]], work: Path) -> dict[str, Any]:
    """Rebuild lz4 with ``orders`` (function name -> block order) and count I1 misses."""
    profile = load_profile()
    lines, applied = [], 0
    for function in profile["functions"]:
        blocks, order = function.get("machine_blocks"), orders.get(function["name"])
        if blocks is None or order is None:
            continue
        ids = [machine for block in order for machine in blocks[block]]
        lines += [f"!{function['name'].split('/')[0]}", "!!" + " ".join(map(str, ids))]
        applied += 1
    clusters = work / "clusters.txt"
    clusters.write_text("\n".join(lines) + "\n")
    prog = work / "prog"
    _build(prog, clusters, None)
    return {"i1_misses": i1_misses(prog), "functions_applied": applied}


def i1_misses(program: Path) -> int:
    """First-level instruction-cache misses of one run (cachegrind, :data:`CACHEGRIND_I1`)."""
    done = subprocess.run(
        [tool("valgrind"), "--tool=cachegrind", "--cache-sim=yes", CACHEGRIND_I1,
         "--cachegrind-out-file=/dev/null", str(program)],
        capture_output=True, text=True, cwd=program.parent,
    )  # fmt: skip
    found = _MISSES.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"cachegrind of {program.name} failed: {done.stderr[-1500:]}")
    return int(found.group(1).replace(",", ""))


def _build(prog: Path, clusters: Path | None, cache: Path | None) -> None:
    files = library_files("lz4", cache)
    sources = sorted(str(p) for p in (files.source_dir / "lz4libs").glob("*.c"))
    flags = ["-O2", "-w", "-no-pie", "-fuse-ld=lld", "-Wl,--emit-relocs",
             "-fbasic-block-address-map"]  # fmt: skip
    if clusters is not None:
        flags.append(f"-fbasic-block-sections=list={clusters}")
    includes = [f"-I{inc}" for inc in files.includes]
    _run([tool("clang-19"), *flags, *includes, *sources, str(WORKLOADS / "lz4.c"),
          "-o", str(prog)])  # fmt: skip


def _machine_blocks(prog: Path) -> dict[str, list[tuple[int, int]]]:
    """``{function: [(offset, machine block id), ...]}`` from ``.llvm_bb_addr_map``."""
    text = _run([tool("llvm-readobj-19"), "--bb-addr-map", "--elf-output-style=JSON", str(prog)])
    result: dict[str, list[tuple[int, int]]] = {}
    for entry in json.loads(text)[0].get("BBAddrMap", []):
        function = entry["Function"]
        ranges = function.get("BB Ranges", [])
        if len(ranges) != 1:
            continue
        result[function["Name"]] = sorted(
            (int(bb["Offset"]), int(bb["ID"])) for bb in ranges[0]["BB Entries"]
        )
    return result


def _map(function: dict[str, Any], machine: list[tuple[int, int]] | None) -> list | None:
    """The machine block of each BOLT block (as one-element lists), or None.

    BOLT prints offsets after its own instruction shortening, so they do not equal the
    compiler's; but where BOLT found as many blocks as the compiler emitted, the blocks are
    the same ones in the same address order, and are matched by rank.
    """
    if not machine or len(machine) != len(function["sizes"]):
        return None
    return [[ident] for _, ident in machine]


def _run(argv: list[str], **kwargs: Any) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        how = (
            f"killed by signal {-done.returncode}"
            if done.returncode < 0
            else f"exit status {done.returncode}"
        )
        output = (done.stderr or done.stdout)[-1500:] or "no output"
        raise RuntimeError(f"{Path(argv[0]).name} failed ({how}): {output}")
    return done.stdout + done.stderr
