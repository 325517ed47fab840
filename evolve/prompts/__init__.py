"""Prompts: what a candidate asks the model for, and from what.

:func:`gather_context` collects what a prompt is built from (the parent and its feedback, a
second parent, the run's best, recent failures of the lineage, the parent's attempts that
gave nothing new: :func:`nothing_new`); :class:`OptimizationMemory`
digests the run's history; :func:`choose_mode` and :func:`pick_repair` pick the edit mode;
:func:`build_messages` renders the chat messages from templates a problem may override, within
``max_chars`` or a tighter :class:`PromptLimit`; :class:`PromptEvolution` evolves prompt
variants beside the programs (off by default: ``[search] prompt_evolution``).
"""

from evoforge.evolve.prompts._build import (
    CURRENT_PROGRAM_HEADING,
    INSPIRATION_HEADING,
    PLACEHOLDERS,
    SECOND_PARENT_HEADING,
    TEMPLATE_NAMES,
    PromptConfig,
    PromptLimit,
    PromptTemplateError,
    build_messages,
    load_templates,
)
from evoforge.evolve.prompts._context import (
    FailedAttempt,
    PromptContext,
    gather_context,
    short_diff,
)
from evoforge.evolve.prompts._editable import editable_note
from evoforge.evolve.prompts._memory import OptimizationMemory, failure_reason
from evoforge.evolve.prompts._modes import Mode, ModeConfig, choose_mode, pick_repair
from evoforge.evolve.prompts._nothing_new import NothingNew, nothing_new
from evoforge.evolve.prompts._variant_bank import FOCUS, FRAGMENTS
from evoforge.evolve.prompts._variants import (
    VARIED,
    Ask,
    PromptEvolution,
    RewriteError,
    templates_of,
)

__all__ = [
    # what a prompt is built from
    "FailedAttempt",
    "PromptContext",
    "gather_context",
    "short_diff",
    "OptimizationMemory",
    "failure_reason",
    "NothingNew",
    "nothing_new",
    # edit modes
    "Mode",
    "ModeConfig",
    "choose_mode",
    "pick_repair",
    # rendering
    "CURRENT_PROGRAM_HEADING",
    "INSPIRATION_HEADING",
    "PLACEHOLDERS",
    "SECOND_PARENT_HEADING",
    "TEMPLATE_NAMES",
    "PromptConfig",
    "PromptLimit",
    "PromptTemplateError",
    "build_messages",
    "editable_note",
    "load_templates",
    # prompt co-evolution
    "FOCUS",
    "FRAGMENTS",
    "VARIED",
    "Ask",
    "PromptEvolution",
    "RewriteError",
    "templates_of",
]
