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

The system message, each mode's task and the answer formats come from templates a problem may
override (:mod:`evoforge.evolve.prompts._templates`).
"""

from __future__ import annotations

import functools
import json
import math
import string
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from evoforge.archive import Program
from evoforge.evolve.prompts._config import PromptConfig, PromptLimit
from evoforge.evolve.prompts._context import FailedAttempt, PromptContext
from evoforge.evolve.prompts._modes import Mode
from evoforge.evolve.prompts._nothing_new import nothing_new_section
from evoforge.evolve.prompts._templates import (
    check_templates,
    load_templates,
    objectives_text,
    placeholder_values,
)
from evoforge.problems import BlockError, find_blocks

if TYPE_CHECKING:
    from evoforge.problems import Problem

CURRENT_PROGRAM_HEADING = "## Current program"
"""A prompt line starting with this is followed by the program to change, fenced."""
INSPIRATION_HEADING = "## Inspiration"
"""Each prompt line starting with this is followed by one inspiration program, fenced."""
FOREIGN_HEADING = f"{INSPIRATION_HEADING} from another task"
"""Heading of another task's elite (cross-task transfer): an inspiration heading too."""
SECOND_PARENT_HEADING = f"{INSPIRATION_HEADING}: second parent"
"""Heading of the crossover partner; an inspiration heading, so the offline model uses it."""

_SHORT_SOURCE = 3000  # a best program's EVOLVE-BLOCK code is shown when at most this long
_MIN_ARTIFACT_CHARS = 100  # below this, artifacts are left out rather than cut further
_FAILURE_ERROR_SHARE = 3  # a lineage failure's error gets artifact_chars / this


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
    values = placeholder_values(problem, context)
    system = string.Template(templates["system"]).substitute(values)
    layout = _Layout(problem, context, config, templates, values, limit)
    budget = limit.max_chars - len(system)
    user = layout.render()
    while len(user) > budget and layout.reduce():
        user = layout.render()
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


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
    parts.append(f"Objectives: {objectives_text(problem)}.")
    return "\n\n".join(parts)


def _program_section(heading: str, program: Program, language: str, note: str = "") -> str:
    """The program under ``heading``, fenced with its language's tag (``cpp`` for C++: a model
    answers in the language the fence names); ``note`` goes between its line and the fence."""
    note = f"{note}\n" if note else ""
    return f"{heading}\n{_describe(program)}\n{note}{_fenced(program.source or '', language)}"


def _describe(program: Program) -> str:
    metrics = {
        k: float(f"{v:.10g}") if isinstance(v, float) and math.isfinite(v) else v
        for k, v in program.metrics.items()
        if isinstance(v, (int, float, str, bool)) and not _bookkeeping(k)
    }  # floats as the score is shown: -3.0942350281959996 costs tokens and says no more
    score = "none" if program.score is None else f"{program.score:.10g}"
    return (
        f"id {program.id}, generation {program.generation}; status: {program.status}; "
        f"score: {score}; metrics: {json.dumps(metrics, default=str)[:500]}"
    )


def _bookkeeping(metric: str) -> bool:
    """A metric the tuner adds about its own work (``untuned_<objective>``, ``tuning_trials``):
    the ``tuning`` artifact tells the model what tuning did, the program line need not."""
    return metric.startswith("untuned_") or metric == "tuning_trials"


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
