"""Run configuration: a TOML file, overridden by CLI flags, stored with the run for resume."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve._errors import ConfigError
from evolve._models import ModelSpec, ModelSpecError
from evolve._modes import ModeConfig
from evolve._prompts import PromptConfig
from evolve._retry import RetryPolicy
from islands import IslandConfig

OFFLINE_MODEL = "offline/mutator"
ENSEMBLE_POLICIES = ("weighted", "ucb1")


@dataclass(frozen=True)
class RunConfig:
    """Everything that shapes a run. Stored in the archive, so ``resume`` needs only the run id.

    Attributes:
        problem: a built-in problem name, a problem folder, or a spec file.
        budget: evaluations to spend (the seed's included); the run finishes when reached.
        max_wall_s: active wall-clock time budget in seconds across sessions (None: no limit).
        seed: seeds every random choice; with ``workers == 1`` a run is reproducible.
        model: a litellm model string; ``offline/mutator`` is the built-in offline model.
            Shorthand for a one-model ``models`` list.
        api_base: endpoint for self-hosted or proxy models (with ``model``).
        temperature, max_tokens: passed to every model (a model's own settings win).
        models: the ensemble, as :class:`~evolve._models.ModelSpec` (TOML: ``[[models]]``
            tables or strings); empty means just ``model``.
        ensemble: how a call picks its model: ``weighted`` (by weight) or ``ucb1`` (adapts to
            improvement per unit cost).
        model_cooldown_s: how long a model that keeps failing leaves the rotation.
        outage_s: when every model has failed for this long without one success, the run
            stops (failed, non-zero exit); ``evoforge resume`` continues it.
        retry: retries of one call (``[retry]``: max_attempts, base_s, max_s,
            max_retry_after_s).
        workers: evaluations in flight (evaluation slots).
        llm_concurrency: model calls in flight (None: ``1`` when reproducible, else
            ``2 * workers`` for the offline model and ``8 * workers`` for remote ones).
        max_failed_streak: stop (failed) after this many attempts in a row produced nothing
            evaluable (edit/syntax errors, duplicates, model errors).
        usd_budget: stop (finished) once the model calls' known cost reaches this many US
            dollars (calls of unknown price add nothing; None: no limit).
        token_budget: stop (finished) once prompt + completion tokens reach this (None: no
            limit).
        modes: how often each edit mode is used and repair's rate (``[modes]``).
        prompts: prompt size and contents, template overrides (``[prompts]``).
        memory_every: evaluations between refreshes of the optimization-memory digest.
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
    models: tuple[ModelSpec, ...] = ()
    ensemble: str = "weighted"
    model_cooldown_s: float = 60.0
    outage_s: float = 300.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    modes: ModeConfig = field(default_factory=ModeConfig)
    prompts: PromptConfig = field(default_factory=PromptConfig)
    memory_every: int = 50
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
            (
                self.ensemble in ENSEMBLE_POLICIES,
                "ensemble",
                f"use one of {', '.join(ENSEMBLE_POLICIES)}",
            ),
            (self.model_cooldown_s >= 0, "model_cooldown_s", "must be zero or positive"),
            (self.outage_s > 0, "outage_s", "must be positive"),
            (self.memory_every >= 1, "memory_every", "must be at least 1"),
        ]
        for ok, name, fix in checks:
            if not ok:
                raise ConfigError(f"{name} = {getattr(self, name)!r}: {fix}")

    @property
    def reproducible(self) -> bool:
        """One evaluation slot means one candidate at a time, in a fixed order."""
        return self.workers == 1

    @property
    def ensemble_specs(self) -> tuple[ModelSpec, ...]:
        """The models calls choose from: ``models``, or the one ``model``."""
        return self.models or (ModelSpec(self.model, api_base=self.api_base),)

    @property
    def model_slots(self) -> int:
        if self.llm_concurrency is not None:
            return self.llm_concurrency
        if self.reproducible:
            return 1
        local = all(s.model.startswith("offline/") for s in self.ensemble_specs)
        return self.workers * (2 if local else 8)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["models"] = [spec.to_dict() for spec in self.models]
        data["prompts"]["templates"] = dict(self.prompts.templates)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, origin: str = "config") -> RunConfig:
        data = dict(data)
        _reject_unknown(cls, data, f"{origin}: unknown setting(s)")
        for name, kind in _SECTIONS.items():
            section = data.pop(name, None) or {}
            if not isinstance(section, kind):
                if not isinstance(section, dict):
                    raise ConfigError(f"{origin}: [{name}] must be a table of settings")
                _reject_unknown(kind, section, f"{origin}: unknown [{name}] setting(s)")
                try:
                    section = kind(**section)
                except (TypeError, ValueError) as exc:
                    raise ConfigError(f"{origin}: [{name}]: {exc}") from None
            data[name] = section
        models = data.pop("models", None) or ()
        if isinstance(models, (str, dict)):
            models = [models]
        try:
            data["models"] = tuple(ModelSpec.from_value(m) for m in models)
        except (ModelSpecError, TypeError) as exc:
            raise ConfigError(f"{origin}: [[models]]: {exc}") from None
        try:
            return cls(**data)
        except TypeError as exc:
            raise ConfigError(f"{origin}: {exc}") from None


# Settings that are tables of their own in TOML (``[islands]``, ``[modes]``, …).
_SECTIONS: dict[str, type] = {
    "islands": IslandConfig,
    "modes": ModeConfig,
    "prompts": PromptConfig,
    "retry": RetryPolicy,
}


def _reject_unknown(kind: type, data: dict[str, Any], what: str) -> None:
    known = {f.name for f in dataclasses.fields(kind)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{what} {', '.join(unknown)}; known: {', '.join(sorted(known))}")


def load_config_file(path: Path) -> dict[str, Any]:
    """Read a TOML run configuration: top-level keys as in :class:`RunConfig`, tables
    ``[islands]``, ``[modes]``, ``[prompts]``, ``[retry]`` and ``[[models]]``."""
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
