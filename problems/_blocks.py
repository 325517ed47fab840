"""EVOLVE-BLOCK regions: the only parts of a program a model may change.

A region is the text between a line containing ``EVOLVE-BLOCK-START`` and the next line
containing ``EVOLVE-BLOCK-END`` (the marker lines themselves are frozen). Any comment syntax
works (``# EVOLVE-BLOCK-START``, ``// EVOLVE-BLOCK-START``), so the same rule serves C, CUDA
and Triton sources.
"""

from __future__ import annotations

from dataclasses import dataclass

START_MARKER = "EVOLVE-BLOCK-START"
END_MARKER = "EVOLVE-BLOCK-END"


class BlockError(ValueError):
    """The EVOLVE-BLOCK markers of a program are missing, unbalanced or nested."""


@dataclass(frozen=True)
class Block:
    """Character offsets ``[start, end)`` of an editable region's content in its source."""

    start: int
    end: int

    def contains(self, start: int, end: int) -> bool:
        return self.start <= start and end <= self.end


def find_blocks(source: str, *, origin: str = "program") -> list[Block]:
    """Return the editable regions of ``source`` in order.

    Raises:
        BlockError: no region, an END without a START, a START without an END, or nesting.
            The message names ``origin`` and the line, and says how to mark a region.
    """
    blocks: list[Block] = []
    open_at: int | None = None
    open_line = 0
    offset = 0
    for lineno, line in enumerate(source.splitlines(keepends=True), start=1):
        line_end = offset + len(line)
        if START_MARKER in line:
            if open_at is not None:
                raise BlockError(
                    f"{origin}: line {lineno} opens an EVOLVE-BLOCK inside the one opened on line "
                    f"{open_line}; close the first with '# {END_MARKER}' (blocks cannot nest)"
                )
            open_at, open_line = line_end, lineno
        elif END_MARKER in line:
            if open_at is None:
                raise BlockError(
                    f"{origin}: line {lineno} has '{END_MARKER}' with no '{START_MARKER}' before it"
                )
            blocks.append(Block(open_at, offset))
            open_at = None
        offset = line_end
    if open_at is not None:
        raise BlockError(
            f"{origin}: the EVOLVE-BLOCK opened on line {open_line} is never closed; "
            f"add a line '# {END_MARKER}' after the code to evolve"
        )
    if not blocks:
        raise BlockError(
            f"{origin} has no EVOLVE-BLOCK: put '# {START_MARKER}' and '# {END_MARKER}' lines "
            "around the code the model may change"
        )
    return blocks


def frozen_parts(source: str, blocks: list[Block] | None = None) -> list[str]:
    """The text outside the editable regions, in order (``len(blocks) + 1`` pieces)."""
    blocks = find_blocks(source) if blocks is None else blocks
    parts, prev = [], 0
    for block in blocks:
        parts.append(source[prev : block.start])
        prev = block.end
    parts.append(source[prev:])
    return parts
