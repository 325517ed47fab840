"""Edits: reading a model's answer and applying it to the parent program.

:func:`apply_edit` turns an answer (SEARCH/REPLACE blocks, or a whole program in a fenced
block) into an :class:`AppliedEdit`, or raises an :class:`EditError` a model can act on. Blocks
are located by the strongest of the rules in :data:`MATCH_KINDS` that finds them, and only
where they apply unambiguously, inside an EVOLVE-BLOCK region; a block found by a tolerant
rule has its REPLACE text mapped the same way, line by line, and a guessed mapping is tried
the other way when the child fails the ``check`` given (the syntax check).
:func:`fenced_blocks` and :func:`is_format_line` are the answer parser's pieces that prompts
and the offline model share.
"""

from evoforge.evolve.edits._apply import AppliedEdit, apply_edit
from evoforge.evolve.edits._match import MATCH_KINDS, MatchKind
from evoforge.evolve.edits._parse import (
    FORMAT_HINT,
    MAX_BLOCKS,
    EditError,
    Fence,
    fenced_blocks,
    is_format_line,
)

__all__ = [
    # applying an answer
    "AppliedEdit",
    "EditError",
    "MATCH_KINDS",
    "MatchKind",
    "apply_edit",
    # reading an answer
    "FORMAT_HINT",
    "MAX_BLOCKS",
    "Fence",
    "fenced_blocks",
    "is_format_line",
]
