"""The ``stages`` of a repository problem: cheap commands run before the check and the measure.

::

    [[stages]]
    name = "smoke"                          # an identifier, unique
    command = "python -m pytest -q -x tests/test_api.py"   # must exit 0
    timeout_s = 20                          # optional; the problem's timeout_s otherwise

    [[stages]]
    name = "quick_bench"
    command = "python bench.py --quick"     # its last stdout line: a JSON object of metrics
    threshold = { metric = "runtime_s", max = 0.5 }

They map onto the engine's cascade (:class:`evoforge.problems.Stage`,
:func:`evoforge.evaluators.run_cascade`): the declared stages run in order, then ``check`` and
``measure`` as the last two stages (named so); a candidate stops at the first command that
exits non-zero (``incorrect``) or whose metrics miss its threshold (``incorrect``, with the
value and the bound), and the later commands are not run. A stage's metrics (the JSON object on
its last stdout line, when it prints one) are kept in the result as ``<stage>.<metric>`` when
a later stage reports the same name.

A threshold's metric must be printed by the stage that holds it: this is checked on the
unchanged repository before a run starts, so a threshold on a metric the command never prints
is refused with one line.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator

from evoforge.base.settings import Settings
from evoforge.problems import ProblemSpecError, Threshold

RESERVED = ("check", "measure")
"""Names of the last two stages (the ``check`` and ``measure`` commands)."""


class RepoStage(Settings):
    """One ``[[stages]]`` entry of ``evoforge.toml`` (see the module docstring)."""

    name: str
    command: Annotated[str, Field(min_length=1)]
    timeout_s: Annotated[float, Field(gt=0)] | None = Field(default=None, strict=False)
    threshold: Threshold | None = None

    @field_validator("name")
    @classmethod
    def _identifier(cls, name: str) -> str:
        if not name.isidentifier():
            raise ValueError('give each stage a name that is an identifier, e.g. "smoke"')
        if name in RESERVED:
            raise ValueError(
                f"{name!r} is the name of the last stages (the check and measure commands); "
                "name this stage otherwise"
            )
        return name

    @field_validator("command")
    @classmethod
    def _not_blank(cls, command: str) -> str:
        if not command.strip():
            raise ValueError('give the shell command the stage runs, e.g. "python bench.py"')
        return command


def check_stages(stages: tuple[RepoStage, ...], where: Any) -> None:
    """Refuse two stages of one name.

    Raises:
        ProblemSpecError: two stages share a name.
    """
    seen: set[str] = set()
    for index, stage in enumerate(stages):
        if stage.name in seen:
            raise ProblemSpecError(
                where, f"stages[{index}].name", f"{stage.name!r} names two stages; make it unique"
            )
        seen.add(stage.name)


def cascade_options(
    stages: tuple[RepoStage, ...], check: str, measure: str, timeout_s: float
) -> list[dict[str, Any]]:
    """Every stage as the ``repo`` evaluator's runner takes it (``options['stages']``): the
    declared ones, then ``check`` and ``measure``; timeouts filled in."""
    declared = [
        {
            "name": s.name,
            "command": s.command,
            "timeout_s": s.timeout_s if s.timeout_s is not None else timeout_s,
            "threshold": s.threshold.model_dump() if s.threshold is not None else None,
        }
        for s in stages
    ]
    final = [
        {"name": name, "command": command, "timeout_s": timeout_s, "threshold": None}
        for name, command in (("check", check), ("measure", measure))
    ]
    return declared + final


def spec_stages(options: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """The generated spec's ``stages = [...]`` line and its scoring functions (the command's
    metrics as they are; the last stage's is the spec's ``evaluate``)."""
    declared = [
        {"name": o["name"], "timeout_s": o["timeout_s"]}
        | ({"threshold": o["threshold"]} if o["threshold"] else {})
        for o in options
    ]
    functions: list[str] = []
    for o in options[:-1]:
        functions += [
            f"def evaluate_{o['name']}(metrics):",
            f'    """Stage {o["name"]!r}: the metrics its command printed, as reported."""',
            "    return metrics",
            "",
            "",
        ]
    return f"stages = {declared!r}", functions
