"""The worked SEARCH/REPLACE example of the answer format, drawn from the program itself.

Why an example from the program, and not a placeholder or an example about another snippet:
small models copy the format example literally. With a placeholder (``lines copied exactly
from the current program``) about half of a 135M model's answers sent the placeholder itself
as SEARCH text (issue 35): a wasted call each. An example about a made-up snippet fails the
same way when copied (its SEARCH text is not in the program), and teaches nothing about
locating lines. An example made of one real line of the current program's EVOLVE-BLOCK, with
one of its numbers changed, cannot be mistaken for a placeholder, and even a literal copy is a
valid, located edit: its SEARCH text is in the program, inside a region, and its REPLACE
makes a small change the evaluator can score (what the offline mutation model would do).
Large models are not misled by it: the prompt says it is only an example.

The line is chosen by a hash of the program, so the same prompt always shows the same example
(prompts stay reproducible) while different parents show different lines, and copies do not
all pile onto the block's first line. Only constants are changed (``NAME = 0.5``, the knobs a
program exposes): a number elsewhere may be an index or a bound whose change breaks the
program. A block without a constant gets an example on another code line whose REPLACE
repeats its SEARCH, and says so.
"""

from __future__ import annotations

import hashlib
import re

from evoforge.problems import END_MARKER, START_MARKER, BlockError, find_blocks

_NUMBER = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?(?![\w.])")
# A constant: ``NAME = 0.5`` (a knob), the one kind of number whose change keeps code valid.
_CONSTANT = re.compile(r"\s*[A-Za-z_]\w*\s*(?::\s*\w+\s*)?=\s*[-+]?(\d+\.\d*|\.\d+|\d+)")
_COMMENTS = ("#", "//", "/*", "*", "--")
_LONGEST = 100  # characters: a longer line makes a poor example


def format_example(source: str | None) -> str:
    """The example paragraph for the ``$example`` placeholder ("" when the program has no
    code line to show: the template's description stands alone)."""
    lines = _code_lines(source or "")
    if not lines:
        return ""
    constants = [(no, line) for no, line in lines if _CONSTANT.match(line)]
    pool = constants or lines
    digest = hashlib.sha256((source or "").encode("utf-8", "surrogatepass")).digest()
    number, line = pool[int.from_bytes(digest[:4], "big") % len(pool)]
    changed = _changed(line) if constants else line
    note = (
        "it changes one number"
        if changed != line
        else "its REPLACE repeats the SEARCH line: yours holds the changed lines"
    )
    return (
        f"An example, made from line {number} of the current program ({note}; your change "
        "may touch any lines between the EVOLVE-BLOCK markers, as many as it needs):\n\n"
        f"<<<<<<< SEARCH\n{line}\n=======\n{changed}\n>>>>>>> REPLACE"
    )


def _code_lines(source: str) -> list[tuple[int, str]]:
    """``(line number, text)`` of the code lines inside the EVOLVE-BLOCK regions."""
    try:
        regions = find_blocks(source)
    except BlockError:
        return []
    out = []
    offset = 0
    for number, line in enumerate(source.split("\n"), start=1):
        inside = any(r.start <= offset < r.end for r in regions)
        offset += len(line) + 1
        text = line.strip()
        if (
            inside
            and text
            and not text.startswith(_COMMENTS)
            and START_MARKER not in line
            and END_MARKER not in line
            and len(line) <= _LONGEST
        ):
            out.append((number, line.rstrip()))
    return out


def _code_part(line: str) -> str:
    """``line`` without a trailing ``#`` or ``//`` comment (strings holding them are rare)."""
    for mark in ("#", "//"):
        line = line.split(mark, 1)[0]
    return line


def _changed(line: str) -> str:
    """``line`` with the first number of its code changed: an integer by one, a float by 10 %."""
    code = _code_part(line)
    found = _NUMBER.search(code)
    if found is None:
        return line
    text = found.group(0)
    if any(c in text for c in ".eE"):
        value = float(text) * 1.1
        new = f"{value:.4g}" if "." in f"{value:.4g}" or "e" in f"{value:.4g}" else f"{value:.1f}"
    else:
        new = str(int(text) + 1)
    return line[: found.start()] + new + line[found.end() :]
