"""Which lines of the current program may change, said where the model reads the program.

The system message states the rule once ("only code between EVOLVE-BLOCK-START and
EVOLVE-BLOCK-END may change"), far from the code; models still edit the fixed lines around
the regions (a helper below the block, an import above it), and each such edit is refused
after its call was paid for. :func:`editable_note` puts the rule right above the program's
fence, concretely: the line numbers of each region, its first and last line, and how many
lines around it are fixed, read-only context.

The program itself stays whole in its fence: models copy SEARCH texts from it and rewrites
keep its fixed lines, and the offline model reads it there.
"""

from __future__ import annotations

from evoforge.problems import END_MARKER, START_MARKER, BlockError, find_blocks

_QUOTE_CHARS = 60  # of a region's first and last line, quoted


def editable_note(source: str) -> str:
    """One short paragraph saying which lines of ``source`` may change (its EVOLVE-BLOCK
    regions, by line number) and that the others are read-only; ``""`` when ``source`` has no
    valid regions (the edit appliers then say why an edit is refused)."""
    try:
        blocks = find_blocks(source)
    except BlockError:
        return ""
    if not blocks:
        return ""
    lines = source.split("\n")
    total = len(lines) - (lines[-1] == "")
    regions, editable = [], 0
    for block in blocks:
        first = source.count("\n", 0, block.start) + 1  # 1-based line of the region's content
        last = source.count("\n", 0, block.end)  # the line before the END marker
        body = [ln for ln in lines[first - 1 : last] if ln.strip()]
        editable += last - first + 1
        if not body:
            regions.append(f"lines {first}-{last} (empty)")
            continue
        regions.append(f"lines {first}-{last} (from `{_quote(body[0])}` to `{_quote(body[-1])}`)")
    fixed = total - editable
    where = "; ".join(regions)
    note = f"Editable: only the code between the {START_MARKER} and {END_MARKER} lines, {where}."
    if fixed > 2 * len(blocks):  # more than the marker lines themselves
        note += (
            f" The other {fixed} lines (the marker lines included) are fixed, read-only "
            "context, shown so you know how the code is used: an edit that touches them is "
            "refused."
        )
    return note


def _quote(line: str) -> str:
    text = line.strip().replace("`", "'")
    return text if len(text) <= _QUOTE_CHARS else text[: _QUOTE_CHARS - 1] + "…"
