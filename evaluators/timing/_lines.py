"""Where a Python candidate spends its work: its own lines by times executed, for the prompt.

Callgrind's instruction count says how much a candidate costs, not where: annotated, it names
the interpreter's C functions (``_PyEval_EvalFrameDefault``), which tell a model nothing about
its program. So beside the count, the candidate's entry is run once more with a line tracer
that counts the executions of each line of the candidate's own code (not of the libraries it
calls), and the costliest lines become the ``profile`` artifact that the next prompt shows:
KForge's profiler feedback, for Python. The counts are deterministic like callgrind's (no
clock is read); a line's count is a proxy for its cost, exact for loops of pure Python, low
for a line that calls into numpy.

:data:`HARNESS` runs in the timing runner's sandboxed job as a plain subprocess; it writes
the counts to :data:`COUNTS_FILE` in the working directory (the candidate's stdout is its own).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

COUNTS_FILE = "line_counts.json"
TOP_LINES = 10
"""Lines the profile names, costliest first."""
_LINE_CHARS = 100  # a line of code is cut to this many characters in the profile

# Imports the candidate (untraced), then traces one call of its entry. The tracer is installed
# per frame of the candidate's code only (the global function returns None elsewhere), so a
# call into a library costs no tracing.
HARNESS = """
import json, sys, types
entry, preload, out = sys.argv[1], [m for m in sys.argv[2].split(",") if m], sys.argv[3]
for name in preload:
    __import__(name)
source = open("candidate.py").read()
module = types.ModuleType("candidate")
exec(compile(source, "<candidate>", "exec"), module.__dict__)
counts = {}
def local(frame, event, arg):
    if event == "line":
        counts[frame.f_lineno] = counts.get(frame.f_lineno, 0) + 1
    return local
def enter(frame, event, arg):
    return local if frame.f_code.co_filename == "<candidate>" else None
function = module.__dict__[entry]
sys.settrace(enter)
try:
    function()
finally:
    sys.settrace(None)
    with open(out, "w") as f:
        json.dump(counts, f)
"""


def read_counts(folder: str | Path) -> dict[int, int] | None:
    """The counts :data:`HARNESS` wrote in ``folder``; None when it wrote none (it failed,
    or overran) or wrote something else (the candidate's code can write files too)."""
    try:
        raw = json.loads((Path(folder) / COUNTS_FILE).read_text())
        return {int(line): int(n) for line, n in raw.items() if int(n) > 0}
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def line_profile(source: str, counts: Mapping[int, int], entry: str, top: int = TOP_LINES) -> str:
    """The ``top`` most executed lines of ``source``, with their counts and shares.

    Example::

        Lines of the program by times executed in one call of main() (a deterministic
        profile; their share of all line executions):
          1,000,000  66.6%  line 7: total += a[i] * b[j]
    """
    total = sum(counts.values())
    if not total:
        return ""
    lines = source.splitlines()
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]
    rows = []
    for number, n in ranked:
        text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
        if len(text) > _LINE_CHARS:
            text = text[: _LINE_CHARS - 3] + "..."
        rows.append(f"  {n:>11,}  {100 * n / total:5.1f}%  line {number}: {text}")
    head = (
        f"Lines of the program by times executed in one call of {entry}() (a deterministic "
        "profile; their share of all line executions):"
    )
    return "\n".join([head, *rows])
