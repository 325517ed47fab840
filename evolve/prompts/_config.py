"""Prompt settings: ``[prompts]`` of a run configuration, and a tighter limit for one prompt."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, ClassVar

from pydantic import Field, field_validator

from evoforge.base.settings import Settings
from evoforge.evolve.prompts._templates import PromptTemplateError, check_templates

MIN_CONTEXT = 256
"""The smallest context window (tokens) a setting may declare."""


class PromptConfig(Settings):
    """How prompts are built (``[prompts]`` in a run configuration).

    Attributes:
        max_chars: the whole prompt (system and user messages) stays within this.
        max_context: the models' context window in tokens, for models whose spec does not say
            (``max_context`` of a ``[[models]]`` table wins) and that litellm does not know
            (a local server: Ollama, llama.cpp, vLLM); None: litellm's model info, if any.
            Prompts are then kept small enough to leave the answer's ``max_tokens`` free.
        top_programs: best programs of the run listed (0: none).
        lineage_failures: recent failures of the parent's lineage shown (0: none).
        artifact_chars: longest tail of one evaluation artifact shown.
        templates: template overrides by name (see the module docstring); they win over the
            problem's own.
    """

    section: ClassVar[str] = "prompts"

    max_chars: Annotated[int, Field(ge=2000)] = 48_000
    max_context: Annotated[int, Field(ge=MIN_CONTEXT)] | None = None
    top_programs: Annotated[int, Field(ge=0)] = 3
    lineage_failures: Annotated[int, Field(ge=0)] = 3
    artifact_chars: Annotated[int, Field(ge=0)] = 1500
    templates: Mapping[str, str] = Field(default_factory=dict)

    @field_validator("templates")
    @classmethod
    def _templates_parse(cls, templates: Mapping[str, str]) -> Mapping[str, str]:
        try:
            check_templates(dict(templates), lambda name: name)
        except PromptTemplateError as exc:
            raise ValueError(str(exc)) from None
        return templates


@dataclass(frozen=True)
class PromptLimit:
    """A size limit for one prompt that may be tighter than ``PromptConfig.max_chars``.

    Attributes:
        max_chars: the whole prompt (system and user messages) stays within this.
        reason: what sets it, as the prompt's note on what was left out says it, e.g.
            ``"the context window of ollama/qwen2.5-coder:7b (4096 tokens)"``.
    """

    max_chars: int
    reason: str
