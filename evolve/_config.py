"""Run configuration: a TOML file, overridden by CLI flags, stored with the run for resume."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from islands import IslandConfig

OFFLINE_MODEL = "offline/mutator"


class ConfigError(ValueError):
    """A run configuration value is missing or wrong; the message says which and how to fix it."""


@dataclass(frozen=True)
class RunConfig:
    """Everything that shapes a run. Stored in the archive, so ``resume`` needs only the run id.

    Attributes:
        problem: a built-in problem name, a problem folder, or a spec file.
        budget: evaluations to spend (the seed's included); the run finishes when reached.
        max_wall_s: active wall-clock time budget in seconds across sessions (None: no limit).
        seed: seeds every random choice; with ``workers == 1`` a run is reproducible.
        model: a litellm model string; ``offline/mutator`` is the built-in offline model.
        api_base: endpoint for self-hosted or proxy models.
        temperature, max_tokens: passed to the model.
        workers: evaluations in flight (evaluation slots).
        llm_concurrency: model calls in flight (None: ``1`` when reproducible, else
            ``2 * workers`` for the offline model and ``8 * workers`` for remote ones).
        max_failed_streak: stop (failed) after this many attempts in a row produced nothing
            evaluable (edit/syntax errors, duplicates, model errors).
        usd_budget: stop (finished) once the model calls' known cost reaches this many US
            dollars (calls of unknown price add nothing; None: no limit).
        token_budget: stop (finished) once prompt + completion tokens reach this (None: no
            limit).
        islands: the island model.
    """

    problem: str
    budget: int = 200
    max_wall_s: float | None = None
    seed: int = 0
    model: str = OFFLINE_MODEL
    api_base: str | None = None
    temperature: float = 0.7
    max_tokens: int = 4096
    workers: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))
    llm_concurrency: int | None = None
    max_failed_streak: int = 200
    usd_budget: float | None = None
    token_budget: int | None = None
    islands: IslandConfig = field(default_factory=IslandConfig)

    def __post_init__(self) -> None:
        checks = [
            (self.budget >= 1, "budget", "must be at least 1 evaluation"),
            (self.workers >= 1, "workers", "must be at least 1"),
            (
                self.llm_concurrency is None or self.llm_concurrency >= 1,
                "llm_concurrency",
                "must be at least 1",
            ),
            (self.max_wall_s is None or self.max_wall_s > 0, "max_wall_s", "must be positive"),
            (self.max_failed_streak >= 1, "max_failed_streak", "must be at least 1"),
            (self.usd_budget is None or self.usd_budget > 0, "usd_budget", "must be positive"),
            (
                self.token_budget is None or self.token_budget > 0,
                "token_budget",
                "must be positive",
            ),
            (
                "/" in self.model,
                "model",
                "use a litellm model string such as 'offline/mutator' or 'openai/gpt-4o-mini'",
            ),
        ]
        for ok, name, fix in checks:
            if not ok:
                raise ConfigError(f"{name} = {getattr(self, name)!r}: {fix}")

    @property
    def reproducible(self) -> bool:
        """One evaluation slot means one candidate at a time, in a fixed order."""
        return self.workers == 1

    @property
    def model_slots(self) -> int:
        if self.llm_concurrency is not None:
            return self.llm_concurrency
        if self.reproducible:
            return 1
        return self.workers * (2 if self.model.startswith("offline/") else 8)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, origin: str = "config") -> RunConfig:
        data = dict(data)
        _reject_unknown(cls, data, f"{origin}: unknown setting(s)")
        islands = data.pop("islands", None) or {}
        if not isinstance(islands, IslandConfig):
            _reject_unknown(IslandConfig, islands, f"{origin}: unknown [islands] setting(s)")
            try:
                islands = IslandConfig(**islands)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"{origin}: [islands]: {exc}") from None
        try:
            return cls(islands=islands, **data)
        except TypeError as exc:
            raise ConfigError(f"{origin}: {exc}") from None


def _reject_unknown(kind: type, data: dict[str, Any], what: str) -> None:
    known = {f.name for f in dataclasses.fields(kind)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{what} {', '.join(unknown)}; known: {', '.join(sorted(known))}")


def load_config_file(path: Path) -> dict[str, Any]:
    """Read a TOML run configuration (top-level keys as in :class:`RunConfig`, plus an
    ``[islands]`` table)."""
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
