"""Prompts: what a candidate asks the model for, and from what.

:func:`gather_context` collects what a prompt is built from (the parent and its feedback, a
second parent, the run's best, recent failures of the lineage, the parent's attempts that
gave nothing new: :func:`nothing_new`); :class:`OptimizationMemory`
digests the run's history; :func:`choose_mode` and :func:`pick_repair` pick the edit mode;
:func:`build_messages` renders the chat messages from templates a problem may override
(:func:`load_templates`), within ``max_chars`` (:class:`PromptConfig`: ``[prompts]``) or a
tighter :class:`PromptLimit`; :class:`PromptEvolution` evolves prompt
variants beside the programs (off by default: ``[search] prompt_evolution``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evolve.prompts._config import (
        PromptConfig as PromptConfig,
        PromptLimit as PromptLimit,
    )
    from evoforge.evolve.prompts._context import (
        FailedAttempt as FailedAttempt,
        Foreign as Foreign,
        PromptContext as PromptContext,
        gather_context as gather_context,
        short_diff as short_diff,
    )
    from evoforge.evolve.prompts._editable import editable_note as editable_note
    from evoforge.evolve.prompts._memory import OptimizationMemory as OptimizationMemory
    from evoforge.evolve.prompts._messages import (
        CURRENT_PROGRAM_HEADING as CURRENT_PROGRAM_HEADING,
        FOREIGN_HEADING as FOREIGN_HEADING,
        INSPIRATION_HEADING as INSPIRATION_HEADING,
        SECOND_PARENT_HEADING as SECOND_PARENT_HEADING,
        build_messages as build_messages,
    )
    from evoforge.evolve.prompts._modes import (
        Mode as Mode,
        ModeConfig as ModeConfig,
        choose_mode as choose_mode,
        pick_repair as pick_repair,
    )
    from evoforge.evolve.prompts._nothing_new import (
        NothingNew as NothingNew,
        nothing_new as nothing_new,
    )
    from evoforge.evolve.prompts._templates import (
        PLACEHOLDERS as PLACEHOLDERS,
        TEMPLATE_NAMES as TEMPLATE_NAMES,
        PromptTemplateError as PromptTemplateError,
        load_templates as load_templates,
    )
    from evoforge.evolve.prompts._variant_bank import FOCUS as FOCUS, FRAGMENTS as FRAGMENTS
    from evoforge.evolve.prompts._variants import (
        VARIED as VARIED,
        Ask as Ask,
        PromptEvolution as PromptEvolution,
        RewriteError as RewriteError,
        templates_of as templates_of,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
