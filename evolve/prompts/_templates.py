"""Prompt templates: the system message, each mode's task and the answer formats, as a problem
or a run overrides them.

Templates: the system message, the task of each mode and the answer formats come from
templates a problem may override (names in :data:`TEMPLATE_NAMES`):

* a file ``<problem folder>/prompts/<name>.md`` (the folder holding the spec file);
* ``options = {"prompts": {"<name>": "..."}}`` in the problem spec (wins over files);
* ``PromptConfig.templates`` (wins over both).

A template is a :class:`string.Template`; ``$$`` is a literal ``$``. Placeholders:

* ``$problem_name``: the problem's name;
* ``$primary``: the primary objective's name; ``$direction``: ``maximize`` or ``minimize``;
* ``$objectives``: every objective with its direction, e.g. ``score (maximize, primary)``;
* ``$mode``: ``diff``, ``rewrite``, ``crossover`` or ``repair``;
* ``$status``: the current program's status (``ok``, or its failure in repair mode);
* ``$score``: the current program's score, or ``none``;
* ``$language``: the program's language (the fence tag asked for);
* ``$example``: a worked SEARCH/REPLACE block made from a line of the current program (see
  :mod:`evoforge.evolve.prompts._example` for why not a placeholder), or "" when it has none.

A template naming any other placeholder, or a prompt file with an unknown name, is an error
(:class:`PromptTemplateError`) that names the file. Files are read once per process.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from evoforge.evolve.prompts._example import format_example

if TYPE_CHECKING:
    from evoforge.evolve.prompts._config import PromptConfig
    from evoforge.evolve.prompts._context import PromptContext
    from evoforge.problems import Problem

TEMPLATE_NAMES = (
    "system",
    "task_diff",
    "task_rewrite",
    "task_crossover",
    "task_repair",
    "answer_diff",
    "answer_rewrite",
)
"""Templates a problem can override (file ``prompts/<name>.md``)."""
PLACEHOLDERS = frozenset(
    {
        *("problem_name", "primary", "direction", "objectives", "mode", "status", "score"),
        *("language", "example"),
    }
)
"""The ``$placeholders`` a template may use."""
DEFAULT_TEMPLATES: Mapping[str, str] = MappingProxyType(
    {
        "system": (
            "You are an expert programmer improving a program for the problem "
            '"$problem_name" by evolution. Each answer proposes one change to the current '
            "program. Only code between EVOLVE-BLOCK-START and EVOLVE-BLOCK-END lines may "
            "change; everything else is fixed."
        ),
        "task_diff": (
            "Propose one focused change to the current program that improves $primary "
            "($direction). Build on what worked (the optimization memory and the best "
            "programs) and do not repeat the recent failures."
        ),
        "task_rewrite": (
            "Rewrite the code between the EVOLVE-BLOCK markers of the current program to "
            "improve $primary ($direction). A different approach is welcome, not only a "
            "tweak; keep the names the fixed code outside the markers uses."
        ),
        "task_crossover": (
            "Combine the current program with the second parent into one child that "
            "improves $primary ($direction): keep what makes each of them good."
        ),
        "task_repair": (
            "The current program failed its evaluation: $status. Fix it so that it runs and "
            "passes the correctness check, keeping its intent (the approach it tries). This is "
            "a functional fix only: do not try to make it faster or to improve $primary "
            "now. The feedback above shows the error; the diff shows the change that "
            "introduced it, when known."
        ),
        "answer_diff": (
            "Answer with one or more SEARCH/REPLACE blocks. A block is a line <<<<<<< SEARCH, "
            "then lines of the current program copied exactly (indentation included) from "
            "between its EVOLVE-BLOCK markers, then a line =======, then the lines that "
            "replace them, then a line >>>>>>> REPLACE. Put a sentence of explanation before "
            "the blocks.\n\n$example"
        ),
        "answer_rewrite": (
            "Answer with the whole new program in one ```$language fenced block: every line of "
            "it, with the EVOLVE-BLOCK-START and EVOLVE-BLOCK-END lines and the fixed code "
            "outside them unchanged."
        ),
    }
)
"""The built-in templates."""


class PromptTemplateError(ValueError):
    """A prompt template is malformed; the message names the file (or setting) and the fix."""


def load_templates(problem: Problem, config: PromptConfig | None = None) -> dict[str, str]:
    """The templates for ``problem``: built-ins overridden by its files, its options, then
    ``config.templates``.

    Raises:
        PromptTemplateError: a prompt file has an unknown name or a template is malformed.
    """
    options = problem.options.get("prompts") if problem.options else None
    if options is not None and not (
        isinstance(options, Mapping) and all(isinstance(v, str) for v in options.values())
    ):
        raise PromptTemplateError(
            f"{problem.spec_path}: options['prompts'] must map template names to template "
            f"texts, found {type(options).__name__}; e.g. options = "
            '{"prompts": {"task_diff": "..."}}'
        )
    overrides = tuple(sorted((config.templates if config else {}).items()))
    return dict(
        _load(
            str(problem.spec_path.parent / "prompts"),
            str(problem.spec_path),
            tuple(sorted((options or {}).items())),
            overrides,
        )
    )


@functools.lru_cache(maxsize=64)
def _load(
    folder: str,
    spec: str,
    options: tuple[tuple[str, str], ...],
    overrides: tuple[tuple[str, str], ...],
) -> Mapping[str, str]:
    templates = dict(DEFAULT_TEMPLATES)
    directory = Path(folder)
    if directory.is_dir():
        files = {}
        for path in sorted(directory.glob("*.md")):
            if path.stem not in TEMPLATE_NAMES:
                raise PromptTemplateError(
                    f"{path}: no template is called {path.stem!r}; name prompt files "
                    f"{', '.join(n + '.md' for n in TEMPLATE_NAMES)}"
                )
            try:
                files[path.stem] = path.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise PromptTemplateError(
                    f"{path}: cannot be read as UTF-8 text ({exc}); fix or remove the file"
                ) from exc
            check_templates({path.stem: files[path.stem]}, _always(str(path)))
        templates.update(files)
    given = dict(options)
    check_templates(given, lambda name: f"{spec}: options['prompts'][{name!r}]")
    templates.update(given)
    templates.update(overrides)  # checked by PromptConfig
    return MappingProxyType(templates)


def _always(where: str) -> Callable[[str], str]:
    """An ``origin`` for one file's templates: every name comes from ``where``."""
    return lambda _name: where


def check_templates(templates: Mapping[str, str], origin: Callable[[str], str]) -> None:
    """Check that each template has a known name and only known placeholders.

    Args:
        templates: texts by template name.
        origin: where a template came from, by name, for the message (a file, a setting).

    Raises:
        PromptTemplateError: the first bad template, naming its origin and the fix.
    """
    for name, text in templates.items():
        where = origin(name)
        if name not in TEMPLATE_NAMES:
            raise PromptTemplateError(
                f"{where}: no template is called {name!r}; known: {', '.join(TEMPLATE_NAMES)}"
            )
        template = string.Template(text)
        if not template.is_valid():
            raise PromptTemplateError(
                f"{where}: a '$' is not followed by a placeholder name; write $$ for a "
                f"literal dollar sign (placeholders: {', '.join(sorted(PLACEHOLDERS))})"
            )
        unknown = sorted(set(template.get_identifiers()) - PLACEHOLDERS)
        if unknown:
            raise PromptTemplateError(
                f"{where}: unknown placeholder(s) {', '.join('$' + u for u in unknown)}; "
                f"known: {', '.join('$' + p for p in sorted(PLACEHOLDERS))}"
            )


def placeholder_values(problem: Problem, context: PromptContext) -> dict[str, str]:
    """The value of each of :data:`PLACEHOLDERS` for a prompt about ``context``."""
    parent = context.parent
    return {
        "problem_name": problem.name,
        "primary": problem.primary.name,
        "direction": str(problem.primary.direction),
        "objectives": objectives_text(problem),
        "mode": str(context.mode),
        "status": str(parent.status),
        "score": "none" if parent.score is None else f"{parent.score:.10g}",
        "language": problem.language,
        "example": format_example(parent.source),
    }


def objectives_text(problem: Problem) -> str:
    """Every objective with its direction, e.g. ``score (maximize, primary), time (minimize)``."""
    return ", ".join(
        f"{o.name} ({o.direction}{', primary' if i == 0 else ''})"
        for i, o in enumerate(problem.objectives)
    )
