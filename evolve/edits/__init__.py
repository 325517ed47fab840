"""Edits: reading a model's answer and applying it to the parent program.

:func:`apply_edit` turns an answer (SEARCH/REPLACE blocks, written with markers, as unified-diff
hunks or as fence pairs labelled "search" and "replace"; or a whole program in a fenced block)
into an :class:`AppliedEdit`, or raises an :class:`EditError` a model can act on. Blocks
are located by the strongest of the rules in :data:`MATCH_KINDS` that finds them, and only
where they apply unambiguously, inside an EVOLVE-BLOCK region; a block found by a tolerant
rule has its REPLACE text mapped the same way, line by line, and a guessed mapping is tried
the other way when the child fails the ``check`` given (the syntax check).
:func:`fenced_blocks` and :func:`is_format_line` are the answer parser's pieces that prompts
and the offline model share. The thinking a reasoning model wrote into its answer is dropped
first (:mod:`evoforge.base.reasoning`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evolve.edits._apply import (
        AppliedEdit as AppliedEdit,
        apply_edit as apply_edit,
        each_block_alone as each_block_alone,
    )
    from evoforge.evolve.edits._match import MATCH_KINDS as MATCH_KINDS, MatchKind as MatchKind
    from evoforge.evolve.edits._parse import (
        FORMAT_HINT as FORMAT_HINT,
        MAX_BLOCKS as MAX_BLOCKS,
        EditError as EditError,
        Fence as Fence,
        fenced_blocks as fenced_blocks,
        is_format_line as is_format_line,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
