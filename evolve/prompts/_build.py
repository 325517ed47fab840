"""Prompt building: the parent and its feedback, the run's history, the task and answer format.

:func:`build_messages` turns a :class:`~evoforge.evolve.PromptContext` into chat messages. The user
message has these sections, in order: the problem and its objectives; the current program
(its metrics, optionally which of its lines may change, its attempts that gave nothing new,
status and evaluation artifacts; in repair mode also the change that broke it);
the second parent (crossover); the run's best programs; inspirations; recent failures of the
parent's lineage; the optimization memory; a note of what was left out for size; the task;
the answer format.

The same messages go to every model, the offline one included: it reads the program after
``CURRENT_PROGRAM_HEADING`` and the ones after ``INSPIRATION_HEADING`` (the second parent's
heading starts with it too), as an LLM would.

Size: the whole prompt is kept within ``PromptConfig.max_chars``, or a tighter
:class:`PromptLimit` (the model's context window, see :mod:`evoforge.evolve.proposals`), by
leaving out, in this order and only as far as needed: the memory digest, the best programs'
sources (last first), the lineage failures (oldest first), the inspirations (last first), then
the current program's artifacts (halved per step, down to none). The problem, the current
program, the second parent, the task and the answer format are never cut. The prompt says what
was left out, and which limit made it necessary.

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
import json
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, ClassVar

from pydantic import Field, field_validator

from evoforge.archive import Program
from evoforge.base.settings import Settings
from evoforge.evolve.prompts._context import FailedAttempt, PromptContext
from evoforge.evolve.prompts._example import format_example
from evoforge.evolve.prompts._modes import Mode
from evoforge.evolve.prompts._nothing_new import nothing_new_section
from evoforge.problems import BlockError, find_blocks

if TYPE_CHECKING:
    from evoforge.problems import Problem

CURRENT_PROGRAM_HEADING = "## Current program"
"""A prompt line starting with this is followed by the program to change, fenced."""
INSPIRATION_HEADING = "## Inspiration"
"""Each prompt line starting with this is followed by one inspiration program, fenced."""

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
FOREIGN_HEADING = f"{INSPIRATION_HEADING} from another task"
"""Heading of another task's elite (cross-task transfer): an inspiration heading too."""
SECOND_PARENT_HEADING = f"{INSPIRATION_HEADING}: second parent"
"""Heading of the crossover partner; an inspiration heading, so the offline model uses it."""

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

MIN_CONTEXT = 256
"""The smallest context window (tokens) a setting may declare."""

_SHORT_SOURCE = 3000  # a best program's EVOLVE-BLOCK code is shown when at most this long
_MIN_ARTIFACT_CHARS = 100  # below this, artifacts are left out rather than cut further
_FAILURE_ERROR_SHARE = 3  # a lineage failure's error gets artifact_chars / this


class PromptTemplateError(ValueError):
    """A prompt template is malformed; the message names the file (or setting) and the fix."""


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


def build_messages(
    problem: Problem,
    context: PromptContext,
    config: PromptConfig | None = None,
    overrides: Mapping[str, str] | None = None,
    *,
    limit: PromptLimit | None = None,
) -> list[dict[str, str]]:
    """Chat messages (system, user) asking for the change ``context.mode`` names.

    Args:
        problem: the problem (its templates, objectives and description).
        context: what the prompt shows.
        config: the run's prompt settings (None: the defaults).
        overrides: templates that win over every other source: the candidate's prompt
            variant (see :class:`~evoforge.evolve.prompts.PromptEvolution`).
        limit: a tighter size limit (the model's context window); the smaller of it and
            ``config.max_chars`` applies, and the note on what was left out names that one.

    The prompt can still exceed the limit when the pieces that are never cut do: the caller
    compares the messages' length with the limit to tell.

    Raises:
        PromptTemplateError: one of the problem's templates, or an override, is malformed.
    """
    config = PromptConfig() if config is None else config
    if limit is None or limit.max_chars >= config.max_chars:
        limit = PromptLimit(config.max_chars, "[prompts] max_chars")
    templates = load_templates(problem, config)
    if overrides:
        check_templates(overrides, lambda name: f"prompt variant template {name!r}")
        templates.update(overrides)
    values = _values(problem, context)
    system = string.Template(templates["system"]).substitute(values)
    layout = _Layout(problem, context, config, templates, values, limit)
    budget = limit.max_chars - len(system)
    user = layout.render()
    while len(user) > budget and layout.reduce():
        user = layout.render()
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# --- templates -----------------------------------------------------------------------------


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


def _values(problem: Problem, context: PromptContext) -> dict[str, str]:
    parent = context.parent
    return {
        "problem_name": problem.name,
        "primary": problem.primary.name,
        "direction": str(problem.primary.direction),
        "objectives": _objectives(problem),
        "mode": str(context.mode),
        "status": str(parent.status),
        "score": "none" if parent.score is None else f"{parent.score:.10g}",
        "language": problem.language,
        "example": format_example(parent.source),
    }


def _objectives(problem: Problem) -> str:
    return ", ".join(
        f"{o.name} ({o.direction}{', primary' if i == 0 else ''})"
        for i, o in enumerate(problem.objectives)
    )


# --- layout --------------------------------------------------------------------------------


class _Layout:
    """The user message, with the state of what has been left out to fit the size limit."""

    def __init__(
        self,
        problem: Problem,
        context: PromptContext,
        config: PromptConfig,
        templates: Mapping[str, str],
        values: Mapping[str, str],
        limit: PromptLimit,
    ) -> None:
        self.context, self.config, self.limit = context, config, limit
        fill = functools.partial(_fill, templates, values)
        mode = context.mode
        task = fill(f"task_{mode}")
        if mode is Mode.REWRITE:
            answer = fill("answer_rewrite")
        elif mode is Mode.CROSSOVER:
            answer = "Either format works for this task.\n\n" + "\n\n".join(
                (fill("answer_diff"), fill("answer_rewrite"))
            )
        else:
            answer = fill("answer_diff")
        self.head = _problem_section(problem)
        self.language = problem.language
        self.tail = f"## Task\n{task}\n\n## Answer format\n{answer}"
        self.second = (
            _program_section(SECOND_PARENT_HEADING, context.second_parent, problem.language)
            if context.second_parent is not None
            else ""
        )
        shown = {p.id: f"inspiration {i}" for i, p in enumerate(context.inspirations, 1)}
        if context.second_parent is not None:
            shown[context.second_parent.id] = "the second parent"
        self.top = [
            _top_entry(i, p, shown.get(p.id), problem.language)
            for i, p in enumerate(context.top_programs, 1)
        ]
        foreign = [(f"{FOREIGN_HEADING} ({f.task})", f.program, f.note) for f in context.foreign]
        self.inspirations = [
            _program_section(f"{INSPIRATION_HEADING} {i}", p, problem.language)
            for i, p in enumerate(context.inspirations, 1)
        ] + [_program_section(h, p, problem.language, n) for h, p, n in foreign]  # cut first
        error_chars = config.artifact_chars // _FAILURE_ERROR_SHARE
        self.failures = [
            _failure_section(f, context.parent.id, error_chars) for f in context.lineage_failures
        ]
        # What is still shown; reduce() takes away one piece at a time.
        self.memory = bool(context.memory_digest.strip())
        self.n_top_sources = sum(1 for _, source in self.top if source)
        self.n_failures = len(self.failures)
        self.n_inspirations = len(self.inspirations)
        self.artifact_chars = config.artifact_chars

    def reduce(self) -> bool:
        """Leave out the next piece in the fixed order; False when nothing is left to cut."""
        if self.memory:
            self.memory = False
        elif self.n_top_sources:
            self.n_top_sources -= 1
        elif self.n_failures:
            self.n_failures -= 1
        elif self.n_inspirations:
            self.n_inspirations -= 1
        elif self.artifact_chars and self.context.parent.artifacts:
            half = self.artifact_chars // 2
            self.artifact_chars = half if half >= _MIN_ARTIFACT_CHARS else 0
        else:
            return False
        return True

    def render(self) -> str:
        parts = [self.head, self._parent()]
        if self.second:
            parts.append(self.second)
        if self.top:
            parts.append(self._top())
        parts += self.inspirations[: self.n_inspirations]
        if self.n_failures:
            parts.append(
                "## Recent failures in this lineage\nLearn from them; do not repeat them.\n\n"
                + "\n\n".join(self.failures[: self.n_failures])
            )
        if self.memory:
            parts.append(f"## Optimization memory\n{self.context.memory_digest.strip()}")
        omitted = self._omitted()
        if omitted:
            parts.append(omitted)
        parts.append(self.tail)
        return "\n\n".join(parts) + "\n"

    def _parent(self) -> str:
        context = self.context
        parent = context.parent
        heading = CURRENT_PROGRAM_HEADING
        if context.mode is Mode.REPAIR:
            heading += f" (it failed: {parent.status}; fix it)"
        parts = [_program_section(heading, parent, self.language, context.editable_note)]
        if context.nothing_new:
            parts.append(nothing_new_section(context.nothing_new))
        feedback = _artifacts(parent.artifacts, self.artifact_chars)
        if feedback:
            parts.append("### Feedback from its evaluation\n" + feedback)
        if context.parent_diff:
            parts.append(
                "### The change that introduced the failure (diff against its parent, which "
                f"passed)\n{_fenced(context.parent_diff, 'diff')}"
            )
        return "\n\n".join(parts)

    def _top(self) -> str:
        lines = ["## Best programs of this run"]
        with_source = 0
        for line, source in self.top:
            lines.append(line)
            if source and with_source < self.n_top_sources:
                lines.append(source)
                with_source += 1
        return "\n".join(lines)

    def _omitted(self) -> str:
        left_out = []
        if self.context.memory_digest.strip() and not self.memory:
            left_out.append("the optimization memory")
        hidden_sources = sum(1 for _, s in self.top if s) - self.n_top_sources
        if hidden_sources:
            left_out.append(f"the code of {hidden_sources} best program(s)")
        if len(self.failures) > self.n_failures:
            left_out.append(f"{len(self.failures) - self.n_failures} recent failure(s)")
        if len(self.inspirations) > self.n_inspirations:
            left_out.append(f"{len(self.inspirations) - self.n_inspirations} inspiration(s)")
        if self.context.parent.artifacts and self.artifact_chars < self.config.artifact_chars:
            if self.artifact_chars:
                left_out.append(f"evaluation feedback beyond {self.artifact_chars} characters")
            else:
                left_out.append("the evaluation feedback")
        if not left_out:
            return ""
        return (
            f"(Left out to keep this prompt within {self.limit.max_chars} characters, "
            f"set by {self.limit.reason}: {'; '.join(left_out)}.)"
        )


def _fill(templates: Mapping[str, str], values: Mapping[str, str], name: str) -> str:
    return string.Template(templates[name]).substitute(values).strip()


def _problem_section(problem: Problem) -> str:
    parts = [f"# Problem: {problem.name}"]
    if problem.description:
        parts.append(problem.description.strip())
    parts.append(f"Objectives: {_objectives(problem)}.")
    return "\n\n".join(parts)


def _program_section(heading: str, program: Program, language: str, note: str = "") -> str:
    """The program under ``heading``, fenced with its language's tag (``cpp`` for C++: a model
    answers in the language the fence names); ``note`` goes between its line and the fence."""
    note = f"{note}\n" if note else ""
    return f"{heading}\n{_describe(program)}\n{note}{_fenced(program.source or '', language)}"


def _describe(program: Program) -> str:
    metrics = {k: v for k, v in program.metrics.items() if isinstance(v, (int, float, str, bool))}
    score = "none" if program.score is None else f"{program.score:.10g}"
    return (
        f"id {program.id}, generation {program.generation}; status: {program.status}; "
        f"score: {score}; metrics: {json.dumps(metrics, default=str)[:500]}"
    )


def _top_entry(rank: int, program: Program, shown_as: str | None, language: str) -> tuple[str, str]:
    """The program's line, and its EVOLVE-BLOCK code fenced (``""`` when long or shown)."""
    line = f"{rank}. {_describe(program)}"
    if shown_as is not None:
        return f"{line} (shown above as {shown_as})", ""
    code = _evolving_code(program.source or "")
    if not code or len(code) > _SHORT_SOURCE:
        return line, ""
    return f"{line}; its EVOLVE-BLOCK code:", _fenced(code, language)


def _evolving_code(source: str) -> str:
    try:
        blocks = find_blocks(source)
    except BlockError:
        return source
    return "\n# ...\n".join(source[b.start : b.end].strip("\n") for b in blocks)


_ARTIFACT_ORDER = ("error", "traceback", "failing_input", "compiler_output", "stderr_tail")


def _artifacts(artifacts: Mapping[str, str], chars: int) -> str:
    """Each non-empty artifact's last ``chars`` characters, fenced; the error first."""
    if chars <= 0:
        return ""
    names = sorted(
        (n for n, text in artifacts.items() if text and str(text).strip()),
        key=lambda n: _ARTIFACT_ORDER.index(n) if n in _ARTIFACT_ORDER else len(_ARTIFACT_ORDER),
    )
    return "\n".join(f"[{n}]\n{_fenced(_tail(str(artifacts[n]), chars), 'text')}" for n in names)


def _tail(text: str, chars: int) -> str:
    text = text.rstrip()
    if len(text) <= chars:
        return text
    return "… " + text[len(text) - chars :]


def _failure_section(failure: FailedAttempt, parent_id: str, error_chars: int) -> str:
    program = failure.program
    if program.parent_id == parent_id:
        origin = "the current program"
    elif program.parent_id is None:
        origin = "no parent"
    else:
        origin = f"ancestor {program.parent_id}"
    head = f"### seq {program.seq}: {program.status} (a {program.edit_kind} of {origin})"
    parts = [head]
    error = program.artifacts.get("error") or program.artifacts.get("traceback") or ""
    if error.strip() and error_chars > 0:
        parts.append(_fenced(_tail(error, error_chars), "text"))
    if failure.diff:
        parts.append(_fenced(failure.diff, "diff"))
    return "\n".join(parts)


def _fenced(text: str, tag: str) -> str:
    """``text`` in a fence longer than any backtick run at a line start inside it."""
    longest = max(_runs(text.split("\n")), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{tag}\n{text.rstrip()}\n{fence}"


def _runs(lines: Iterable[str]) -> Iterable[int]:
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith("```"):
            yield len(stripped) - len(stripped.lstrip("`"))
