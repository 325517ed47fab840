"""An OpenAI-compatible model server for side-by-side engine benchmarks, on 127.0.0.1.

Every chat request gets one SEARCH/REPLACE block that changes one number of the current
program: the first fenced code block after a line that names the "current program" (evoforge's
``## Current program``, OpenEvolve's ``# Current Program``), and within it a line between
``EVOLVE-BLOCK-START`` and ``EVOLVE-BLOCK-END`` that holds a number. The new number is the old
one plus a Gaussian step drawn from a hash of the request, so the same request gets the same
answer and two engines get answers of the same kind and cost.

It answers at once (no delay): the model side costs what a fast local server (vLLM with a
small model) would, so an engine's own per-candidate cost is what a benchmark sees.

    python bench/number_server.py [--port 0]     # prints "READY http://127.0.0.1:<port>/v1"

It reuses the test server's HTTP handling (``tests/evolve/openai_server.py``: keep-alive,
OpenAI-shaped bodies and usage), run from the repository root.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import signal
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.evolve.openai_server import OpenAIServer  # noqa: E402

_HEADING = re.compile(r"^#+\s*current program\s*$", re.IGNORECASE | re.MULTILINE)
_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\n(.*?)```", re.DOTALL)
_NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d+(?:e-?\d+)?|(?<![\w.])-?\d+(?![\w.])")


def current_program(text: str) -> str | None:
    """The first fenced block after the "current program" heading of a prompt."""
    heading = _HEADING.search(text)
    if heading is None:
        return None
    block = _FENCE.search(text, heading.end())
    return block.group(1) if block else None


def number_edit(body: dict[str, Any]) -> str:
    """One SEARCH/REPLACE block changing one number inside the program's EVOLVE-BLOCK."""
    messages = body.get("messages") or []
    user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    text = str((user or {}).get("content") or "")
    program = current_program(text)
    if program is None:
        return "I found no current program to change."
    lines = program.splitlines()
    inside, candidates = False, []
    for number, line in enumerate(lines):
        if "EVOLVE-BLOCK-START" in line:
            inside = True
        elif "EVOLVE-BLOCK-END" in line:
            inside = False
        elif inside and _NUMBER.search(line) and not line.lstrip().startswith("#"):
            candidates.append(number)
    if not candidates:
        return "The current program has no number to change inside its EVOLVE-BLOCK."
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).digest()
    rng = random.Random(digest)
    index = candidates[rng.randrange(len(candidates))]
    old = lines[index]
    matches = list(_NUMBER.finditer(old))
    match = matches[rng.randrange(len(matches))]
    value = float(match.group(0)) + rng.gauss(0.0, 0.5)
    new = f"{old[: match.start()]}{value:.6g}{old[match.end() :]}"
    return f"<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args()
    server = OpenAIServer(answer=number_edit, port=args.port)

    def _quit(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _quit)
    print(f"READY {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
