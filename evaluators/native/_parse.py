"""Reading what valgrind and llvm-mca write: pure functions, tested on known texts.

The cycle estimate of ``cachegrind`` is iai's (bheisler/iai, ``src/lib.rs``): an L1 hit costs
1 cycle, a last-level hit 5, a miss to memory 35::

    ram_hits = ILmr + DLmr + DLmw
    ll_hits  = I1mr + D1mr + D1mw - ram_hits
    l1_hits  = Ir + Dr + Dw - ll_hits - ram_hits
    cycles   = l1_hits + 5 * ll_hits + 35 * ram_hits

It is a model of a simple in-order machine with cachegrind's simulated caches (by default the
host's L1 and last-level geometry), not a prediction for a real out-of-order CPU: use it to rank
programs whose difference is memory behaviour.
"""

from __future__ import annotations

import re

_TOTALS = re.compile(r"^(?:totals|summary):\s*([\d ]+)$", re.MULTILINE)
_EVENTS = re.compile(r"^events:\s*(.+)$", re.MULTILINE)


class ParseError(ValueError):
    """A tool's output did not have the expected shape (the text is quoted, cut)."""


def event_totals(text: str) -> dict[str, int]:
    """The ``events:`` line and the ``summary:``/``totals:`` counts of a callgrind or
    cachegrind output file, as ``{"Ir": ..., "D1mr": ...}``."""
    events, totals = _EVENTS.search(text), _TOTALS.search(text)
    if events is None or totals is None:
        raise ParseError(f"no events/summary line in valgrind's output: {text[:300]!r}")
    names, counts = events.group(1).split(), totals.group(1).split()
    values = {name: int(count) for name, count in zip(names, counts, strict=False)}
    return {name: values.get(name, 0) for name in names}


def cache_metrics(totals: dict[str, int]) -> dict[str, float]:
    """Cachegrind's totals as metrics: misses and the cycle estimate (module docstring)."""
    get = totals.get
    ram = get("ILmr", 0) + get("DLmr", 0) + get("DLmw", 0)
    ll_hits = get("I1mr", 0) + get("D1mr", 0) + get("D1mw", 0) - ram
    accesses = get("Ir", 0) + get("Dr", 0) + get("Dw", 0)
    l1_hits = accesses - ll_hits - ram
    return {
        "instructions": float(get("Ir", 0)),
        "i1_misses": float(get("I1mr", 0)),
        "d1_misses": float(get("D1mr", 0) + get("D1mw", 0)),
        "ll_misses": float(ram),
        "cycles": float(l1_hits + 5 * ll_hits + 35 * ram),
    }


_FUNCTION_END = re.compile(r"^\.Lfunc_end\d+:", re.MULTILINE)


def asm_functions(asm: str) -> dict[str, str]:
    """The body of each function in ``clang -S`` output, by (mangled) symbol name.

    A body is the instructions between the symbol's label and its ``.Lfunc_end`` label,
    without directives and labels (what llvm-mca analyses as one loop body)."""
    functions: dict[str, str] = {}
    names = re.findall(r"^\s*\.type\s+([^,\s]+),@function", asm, re.MULTILINE)
    for name in names:
        start = re.search(rf"^{re.escape(name)}:", asm, re.MULTILINE)
        if start is None:
            continue
        end = _FUNCTION_END.search(asm, start.end())
        body = asm[start.end() : end.start() if end else len(asm)]
        lines = [
            line.split("#", 1)[0].rstrip()
            for line in body.splitlines()
            if line.strip() and not line.strip().startswith((".", "#")) and ":" not in line
        ]
        functions[name] = "\n".join(line for line in lines if line.strip())
    return functions


_MCA_FIELDS = {
    "Total Cycles": "mca_cycles",
    "IPC": "mca_ipc",
    "Block RThroughput": "mca_rthroughput",
}


def mca_summary(text: str) -> dict[str, float]:
    """``Total Cycles``, ``IPC`` and ``Block RThroughput`` of one llvm-mca report."""
    found: dict[str, float] = {}
    for label, metric in _MCA_FIELDS.items():
        match = re.search(rf"^{re.escape(label)}:\s*([\d.]+)", text, re.MULTILINE)
        if match is None:
            raise ParseError(f"llvm-mca printed no {label!r}: {text[:300]!r}")
        found[metric] = float(match.group(1))
    return found


_NOISE = ("I1 cache", "D1 cache", "LL cache", "Timerange", "Trigger", "Profiled target")


def top_costs(annotated: str, *, lines: int = 12) -> str:
    """The head of ``callgrind_annotate``'s report: the totals and the costliest functions
    (and, with ``--auto=yes``, the costliest source lines), cut to ``lines`` entries each."""
    out: list[str] = []
    section_rows = 0
    for line in annotated.splitlines():
        if line.startswith("The following files"):
            break
        if line.startswith(_NOISE):
            continue
        if line.startswith("--") or not line.strip():
            section_rows = 0
            continue
        if re.match(r"^\s*[\d,]+ ", line):
            section_rows += 1
            if section_rows > lines:
                continue
        elif line.startswith(("Profile data file", "Events recorded", "Events shown")):
            continue
        elif line.startswith(("Event sort order", "Thresholds", "Include dirs", "User annot")):
            continue
        elif line.startswith(("Auto-annotation", "Ir ")):
            out.append(line)
            continue
        out.append(line[:160])
    return "\n".join(out)[:4000]
