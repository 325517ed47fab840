"""Run configuration: a TOML file, overridden by CLI flags or Python arguments, stored with the
run for resume.

One pydantic model (:class:`RunConfig`) with a model per section (``[islands]``, ``[modes]``,
``[prompts]``, ``[retry]``, ``[search]``, ``[[models]]``); TOML, the command line and the
Python API all validate through it, so they accept and refuse the same values with the same
one-line errors.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from evoforge.base.settings import ConfigError, Settings
from evoforge.evolve.config._suite import SuiteConfig
from evoforge.evolve.models import ModelSpec, ModelString, Policy, RetryPolicy
from evoforge.evolve.offline import MODEL as OFFLINE_MODEL
from evoforge.evolve.prompts import ModeConfig, PromptConfig
from evoforge.evolve.search import SearchConfig
from evoforge.islands import IslandConfig

PositiveInt = Annotated[int, Field(ge=1)]
PositiveFloat = Annotated[float, Field(gt=0)]


class RunConfig(Settings):
    """Everything that shapes a run. Stored in the archive, so ``resume`` needs only the run id.

    Attributes:
        problem: a built-in problem name, a problem folder, or a spec file.
        budget: evaluations to spend (the seed's included); the run finishes when reached.
        max_wall_s: active wall-clock time budget in seconds across sessions (None: no limit);
            a session counts from when it can propose (start-up is not counted).
        seed: seeds every random choice; with ``workers == 1`` a run is reproducible.
        model: a litellm model string; ``offline/mutator`` is the built-in offline model.
            Shorthand for a one-model ``models`` list.
        api_base: endpoint for self-hosted or proxy models (with ``model``).
        temperature, max_tokens: passed to every model (a model's own settings win).
        models: the ensemble, as :class:`~evoforge.evolve.models.ModelSpec` (TOML:
            ``[[models]]`` tables or strings); empty means just ``model``.
        ensemble: how a call picks its model: ``weighted`` (by weight) or ``ucb1`` (adapts to
            improvement per unit cost).
        model_cooldown_s: how long a model that keeps failing leaves the rotation.
        outage_s: when every model has failed for this long without one success, the run
            stops (failed, non-zero exit); ``evoforge resume`` continues it.
        retry: retries of one call (``[retry]``: max_attempts, base_s, max_s,
            max_retry_after_s).
        workers: evaluations in flight (evaluation slots; with ``executor = "ray"``, Ray
            actors across the cluster).
        proposal_workers: processes that build prompts, call models and apply answers (None:
            half the CPU cores, 1 to 16). Each serves many model calls at once; more of them
            help when litellm's per-call CPU, not the model, limits the rate. Models whose
            provider plugin was registered in this process only (``pm.register``) are called
            in the controller's process instead, with a warning.
        executor: where evaluations run: ``local`` (sandboxed fork servers on this host) or
            ``ray`` (Ray actors on a cluster, with the evaluator's resource requests; needs
            ``pip install "evoforge[ray]"``). The controller and the archive stay here.
        ray_address: the Ray cluster to join (``ray://host:10001`` or ``host:6379``); None
            starts a local one (``executor = "ray"`` only).
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
        tune: tune the knobs candidates declare, when the problem asks for it (its
            ``tuning``; needs optuna: ``pip install 'evoforge[tune]'``).
        islands: the island model (``[islands]``).
        search: built-in descriptors, tolerant edits, the novelty filter and prompt
            co-evolution (``[search]``; see :class:`~evoforge.evolve.SearchConfig`).
        suite: how a suite's one budget is spread over its tasks (``[suite]``; see
            :class:`~evoforge.evolve.config.SuiteConfig`); a lone problem ignores it.

    Example::

        config = RunConfig(problem="circle_packing", budget=600, islands={"count": 2})
        evoforge.run(config.problem, config=config)
        RunConfig.from_dict(load_config_file(Path("run.toml")) | {"problem": "trivial"})

    Raises:
        ConfigError: on construction, for a missing, unknown or bad value; the message names
            the field, the value and what is allowed.
    """

    problem: Annotated[str, Field(min_length=1)]
    budget: PositiveInt = 200
    max_wall_s: PositiveFloat | None = None
    seed: Annotated[int, Field(ge=0)] = 0
    model: ModelString = OFFLINE_MODEL
    api_base: str | None = None
    temperature: Annotated[float, Field(ge=0)] = 0.7
    max_tokens: PositiveInt = 4096
    workers: PositiveInt = Field(default_factory=lambda: max(1, os.cpu_count() or 1))
    llm_concurrency: PositiveInt | None = None
    proposal_workers: PositiveInt | None = None
    executor: Literal["local", "ray"] = "local"
    ray_address: Annotated[str, Field(min_length=1)] | None = None
    max_failed_streak: PositiveInt = 200
    usd_budget: PositiveFloat | None = None
    token_budget: PositiveInt | None = None
    models: Annotated[tuple[ModelSpec, ...], Field(strict=False)] = ()
    ensemble: Policy = "weighted"
    model_cooldown_s: Annotated[float, Field(ge=0)] = 60.0
    outage_s: PositiveFloat = 300.0
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    modes: ModeConfig = Field(default_factory=ModeConfig)
    prompts: PromptConfig = Field(default_factory=PromptConfig)
    memory_every: PositiveInt = 50
    tune: bool = True
    islands: IslandConfig = Field(default_factory=IslandConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    suite: SuiteConfig = Field(default_factory=SuiteConfig)

    @field_validator("models", mode="before")
    @classmethod
    def _model_strings(cls, models: Any) -> Any:
        """``models = "openai/x"``, a single table, or a list mixing strings and tables."""
        if isinstance(models, str | Mapping | ModelSpec):
            models = [models]
        if isinstance(models, list | tuple):
            return tuple({"model": m} if isinstance(m, str) else m for m in models)
        return models

    @field_validator("ray_address")
    @classmethod
    def _ray_only(cls, address: str | None, info: Any) -> str | None:
        if address is not None and info.data.get("executor") != "ray":
            raise ValueError("is only used with executor = 'ray'; add executor = 'ray'")
        return address

    @property
    def proposal_processes(self) -> int:
        """Proposal worker processes: ``proposal_workers``, or half the CPU cores (1 to 16)."""
        from evoforge.evolve.proposals import default_processes

        return self.proposal_workers or default_processes()

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
        """Model calls in flight: ``llm_concurrency``, or a default from the workers."""
        if self.llm_concurrency is not None:
            return self.llm_concurrency
        if self.reproducible:
            return 1
        local = all(s.model.startswith("offline/") for s in self.ensemble_specs)
        return self.workers * (2 if local else 8)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-able), as :meth:`from_dict` reads it back."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, origin: str = "config") -> RunConfig:
        """Validate settings read from TOML, flags or the archive.

        Raises:
            ConfigError: one line naming each bad setting, prefixed by ``origin``.
        """
        return cls.load(data, where=origin)


def load_config_file(path: Path) -> dict[str, Any]:
    """Read a TOML run configuration: top-level keys as in :class:`RunConfig`, tables
    ``[islands]``, ``[modes]``, ``[prompts]``, ``[retry]``, ``[search]``, ``[suite]`` and
    ``[[models]]``.

    Raises:
        ConfigError: the file is missing or is not valid TOML.
    """
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def layered(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Run settings from layers, lowest first (a problem's ``run_defaults``, a configuration
    file, flags or Python arguments): a later layer wins key by key, sections (``islands``,
    ``modes``, ``prompts``, ``retry``) merge key by key, and a layer that names ``model`` or
    ``models`` replaces both of the layers below (a model named on the command line is the
    whole ensemble)."""
    merged: dict[str, Any] = {}
    for layer in layers:
        if "model" in layer or "models" in layer:
            merged.pop("model", None)
            merged.pop("models", None)
        for key, value in layer.items():
            if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
    return merged
