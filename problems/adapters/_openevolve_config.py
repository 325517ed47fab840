"""An OpenEvolve ``config.yaml`` mapped onto evoforge's settings, with a report of the rest.

Mapped where the setting means the same thing here (run settings go to the problem's
``run_defaults``, which a configuration file and flags override):

===================================  ================================================
OpenEvolve                           evoforge
===================================  ================================================
``max_iterations``                   ``budget`` = max_iterations + 1 (the seed counts)
``random_seed``                      ``seed``
``llm.models`` / ``primary_model``,  ``models``: ``openai/<name>`` (OpenEvolve speaks the
``secondary_model`` (+ weights)      OpenAI API to every endpoint) with ``api_base``
``llm.api_base``                     each model's ``api_base``
``llm.api_key: ${VAR}``              ``api_key_env = "VAR"`` (a literal key is never read)
``llm.temperature``, ``max_tokens``  ``temperature``, ``max_tokens``
``llm.timeout``                      each model's ``timeout_s``
``llm.retries``, ``retry_delay``     ``retry.max_attempts`` (= retries + 1), ``retry.base_s``
``prompt.system_message``            the problem's ``system`` prompt template
``prompt.num_top_programs``          ``prompts.top_programs``
``prompt.num_diverse_programs``      ``islands.inspirations``
``database.num_islands``             ``islands.count``
``database.migration_interval``      ``islands.migration_interval`` (OpenEvolve counts an
                                     island's generations, evoforge its accepted programs)
``database.migration_rate``          ``islands.migration_rate``
``evaluator.timeout``                each stage's ``timeout_s``
``evaluator.memory_limit_mb``        ``memory_mb``
``evaluator.cascade_evaluation``     cascade stages from ``evaluate_stage1/2/3``
``evaluator.cascade_thresholds``     the stages' thresholds (on ``fitness``)
``evaluator.parallel_evaluations``   ``workers``
``database.feature_dimensions``,     ``descriptors``, with their bins
``feature_bins``                     (:mod:`~evoforge.problems.adapters._openevolve_features`)
``diff_based_evolution``,            ``modes`` (diff / rewrite weights)
``allow_full_rewrites``
``language``, ``file_suffix``        the program file's suffix
===================================  ================================================

Everything else is reported as ignored, with the reason where there is one (no LLM feedback in
the score, no evaluation retries, checkpoints: the archive commits every
candidate).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evoforge.problems import ProblemSpecError
from evoforge.problems.adapters._openevolve_features import read_bins, read_dimensions

DEFAULT_THRESHOLDS = (0.5, 0.75, 0.9)  # OpenEvolve's defaults
DEFAULT_TIMEOUT_S = 300.0  # OpenEvolve's evaluator.timeout default
DEFAULT_MEMORY_MB = 4096  # OpenEvolve has no memory limit; candidates here always have one
_ENV_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
_LANGUAGE_SUFFIX = {
    "python": ".py",
    "rust": ".rs",
    "r": ".r",
    "metal": ".metal",
    "cpp": ".cpp",
    "c": ".c",
    "cuda": ".cu",
    "javascript": ".js",
    "typescript": ".ts",
    "go": ".go",
    "julia": ".jl",
}
_WHY = {
    "checkpoint_interval": "the archive commits every candidate",
    "log_level": "use EVOFORGE_LOG",
    "log_dir": "use EVOFORGE_LOG; the archive keeps every program",
    "max_code_length": "no limit on program size",
    "early_stopping_patience": "runs stop on budgets",
    "evaluator.max_retries": "each candidate is evaluated once; a failure is a typed verdict",
    "evaluator.use_llm_feedback": "scores come from the evaluator only",
    "evaluator.llm_feedback_weight": "scores come from the evaluator only",
    "evaluator.enable_artifacts": "artifacts are always kept",
    "evaluator.distributed": "use --workers (and Ray, where installed)",
    "database.population_size": "islands keep MAP-Elites grids, not a fixed population",
    "database.archive_size": "the archive keeps every program (it sets feature_bins' minimum)",
    "llm.api_key": "a key written in the file is never read or stored; put it in an "
    "environment variable and write api_key: ${VAR}",
}


@dataclass
class Mapped:
    """What a ``config.yaml`` gives: run settings, problem settings, and the report."""

    run_defaults: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int = DEFAULT_MEMORY_MB
    cascade: bool = True
    thresholds: tuple[float, ...] = DEFAULT_THRESHOLDS
    system_prompt: str | None = None
    suffix: str | None = None
    feature_dimensions: tuple[str, ...] | None = None
    """``database.feature_dimensions``; None: not given (OpenEvolve's defaults apply)."""
    feature_bins: int | dict[str, int] | None = None
    archive_size: int | None = None
    mapped: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    def notes(self, path: Path) -> list[str]:
        lines = []
        if self.mapped:
            lines.append(f"{path.name}: mapped " + "; ".join(self.mapped))
        if self.ignored:
            lines.append(f"{path.name}: ignored " + "; ".join(self.ignored))
        return lines


def read_config(path: Path) -> dict[str, Any]:
    """The YAML file as a dict.

    Raises:
        ProblemSpecError: not valid YAML, or not a mapping at the top.
    """
    import yaml

    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ProblemSpecError(path, "yaml", f"is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ProblemSpecError(path, "yaml", f"holds a {type(data).__name__}, not settings")
    return data


def map_config(data: Mapping[str, Any], path: Path) -> Mapped:
    """Map OpenEvolve's settings (see the module docstring).

    Raises:
        ProblemSpecError: a mapped setting has a value of the wrong kind (named, with the
            expected kind).
    """
    out = Mapped()
    run = out.run_defaults
    reader = _Reader(path, out)
    for key, value in data.items():
        if key == "max_iterations":
            run["budget"] = reader.integer(key, value, minimum=0) + 1
            out.mapped.append(f"max_iterations -> budget {run['budget']} (the seed counts)")
        elif key == "random_seed":
            if value is not None:
                run["seed"] = reader.integer(key, value, minimum=0)
                out.mapped.append(f"random_seed -> seed {run['seed']}")
        elif key in ("language", "file_suffix"):
            suffix = _suffix(key, value)
            if suffix:
                out.suffix = out.suffix or suffix
                out.mapped.append(f"{key} -> program file suffix {suffix}")
        elif key in ("diff_based_evolution", "allow_full_rewrites"):
            continue  # below, together
        elif key == "llm":
            _llm(reader, reader.mapping(key, value), run)
        elif key == "prompt":
            _prompt(reader, reader.mapping(key, value), run)
        elif key == "database":
            _database(reader, reader.mapping(key, value), run)
        elif key == "evaluator":
            _evaluator(reader, reader.mapping(key, value), run)
        else:
            reader.ignore(key)
    _modes(reader, data, run)
    out.ignored = list(dict.fromkeys(out.ignored))
    return out


class _Reader:
    """Typed reads that fail with the file and the key, and the ignore list."""

    def __init__(self, path: Path, out: Mapped) -> None:
        self.path, self.out = path, out

    def ignore(self, key: str) -> None:
        why = _WHY.get(key)
        self.out.ignored.append(f"{key} ({why})" if why else key)

    def mapping(self, key: str, value: Any) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise ProblemSpecError(self.path, key, f"found {value!r}; expected a section")
        return value

    def number(self, key: str, value: Any, *, minimum: float = 0.0) -> float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < minimum:
            raise ProblemSpecError(
                self.path, key, f"found {value!r}; expected a number >= {minimum:g}"
            )
        return float(value)

    def integer(self, key: str, value: Any, *, minimum: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ProblemSpecError(
                self.path, key, f"found {value!r}; expected a whole number >= {minimum}"
            )
        return value


def _llm(reader: _Reader, llm: Mapping[str, Any], run: dict[str, Any]) -> None:
    out = reader.out
    base = llm.get("api_base")
    key_env = _key_env(reader, "llm.api_key", llm.get("api_key"))
    models = []
    for index, entry in enumerate(llm.get("models") or []):
        where = f"llm.models[{index}]"
        entry = reader.mapping(where, entry)
        if not entry.get("name"):
            raise ProblemSpecError(reader.path, where, "has no name; give the model's name")
        spec: dict[str, Any] = {"model": _litellm(entry["name"])}
        if "weight" in entry:
            spec["weight"] = reader.number(f"{where}.weight", entry["weight"], minimum=1e-9)
        spec_base = entry.get("api_base") or base
        if spec_base and not _is_openai(spec_base):
            spec["api_base"] = spec_base
        env = _key_env(reader, f"{where}.api_key", entry.get("api_key")) or key_env
        if env:
            spec["api_key_env"] = env
        for name, target in (("temperature", "temperature"), ("max_tokens", "max_tokens")):
            if entry.get(name) is not None:
                spec[target] = entry[name]
        for name in sorted(set(entry) - {"name", "weight", "api_base", "api_key"}):
            if name not in ("temperature", "max_tokens"):
                reader.ignore(f"{where}.{name}")
        models.append(spec)
    for role in ("primary", "secondary"):
        role_model = llm.get(f"{role}_model")
        if not role_model:
            continue
        spec = {"model": _litellm(role_model)}
        weight = llm.get(f"{role}_model_weight")
        if weight is not None:
            spec["weight"] = reader.number(f"llm.{role}_model_weight", weight, minimum=1e-9)
        if base and not _is_openai(base):
            spec["api_base"] = base
        if key_env:
            spec["api_key_env"] = key_env
        if not any(m["model"] == spec["model"] for m in models):
            models.append(spec)
    timeout = llm.get("timeout")
    if timeout is not None:
        for spec in models:
            spec["timeout_s"] = reader.number("llm.timeout", timeout, minimum=1e-9)
    if models:
        run["models"] = models
        out.mapped.append(
            "llm models -> "
            + ", ".join(m["model"] for m in models)
            + " (OpenAI-compatible"
            + (f" at {base}" if base and not _is_openai(base) else "")
            + "; --model offline/mutator runs without them)"
        )
    for name, target in (("temperature", "temperature"), ("max_tokens", "max_tokens")):
        if llm.get(name) is not None:
            run[target] = llm[name]
            out.mapped.append(f"llm.{name} -> {target} {llm[name]}")
    retry: dict[str, Any] = {}
    if llm.get("retries") is not None:
        retry["max_attempts"] = reader.integer("llm.retries", llm["retries"]) + 1
    if llm.get("retry_delay") is not None:
        retry["base_s"] = reader.number("llm.retry_delay", llm["retry_delay"])
        retry["max_s"] = max(60.0, retry["base_s"])
    if retry:
        run["retry"] = retry
        out.mapped.append("llm.retries/retry_delay -> retry")
    known = {
        "models",
        "primary_model",
        "primary_model_weight",
        "secondary_model",
        "secondary_model_weight",
        "api_base",
        "temperature",
        "max_tokens",
        "timeout",
        "retries",
        "retry_delay",
    }
    for name in llm:
        if name not in known and name != "api_key":  # the key: _key_env() reported it
            reader.ignore(f"llm.{name}")


def _prompt(reader: _Reader, prompt: Mapping[str, Any], run: dict[str, Any]) -> None:
    out = reader.out
    for name, value in prompt.items():
        if name == "system_message" and isinstance(value, str) and value.strip():
            out.system_prompt = value
            out.mapped.append("prompt.system_message -> the problem's system prompt")
        elif name == "num_top_programs":
            count = reader.integer(f"prompt.{name}", value)
            run.setdefault("prompts", {})["top_programs"] = count
            out.mapped.append(f"prompt.num_top_programs -> prompts.top_programs {count}")
        elif name == "num_diverse_programs":
            count = reader.integer(f"prompt.{name}", value)
            run.setdefault("islands", {})["inspirations"] = count
            out.mapped.append(f"prompt.num_diverse_programs -> islands.inspirations {count}")
        else:
            reader.ignore(f"prompt.{name}")


def _database(reader: _Reader, database: Mapping[str, Any], run: dict[str, Any]) -> None:
    out = reader.out
    islands = run.setdefault("islands", {})
    for name, value in database.items():
        where = f"database.{name}"
        if name == "num_islands":
            islands["count"] = reader.integer(where, value, minimum=1)
            out.mapped.append(f"{where} -> islands.count {islands['count']}")
        elif name == "migration_interval":
            islands["migration_interval"] = reader.integer(where, value, minimum=1)
            out.mapped.append(
                f"{where} -> islands.migration_interval {value} (accepted programs, not "
                "generations)"
            )
        elif name == "migration_rate":
            islands["migration_rate"] = reader.number(where, value, minimum=1e-9)
            out.mapped.append(f"{where} -> islands.migration_rate {value}")
        elif name == "random_seed" and value is not None:
            run.setdefault("seed", reader.integer(where, value))
            out.mapped.append(f"{where} -> seed {run['seed']}")
        elif name == "feature_dimensions":
            out.feature_dimensions = read_dimensions(reader.path, value)
        elif name == "feature_bins":
            out.feature_bins = read_bins(reader.path, value)
        elif name == "archive_size":
            out.archive_size = reader.integer(where, value, minimum=1)
            reader.ignore(where)
        else:
            reader.ignore(where)
    if not islands:
        run.pop("islands", None)


def _evaluator(reader: _Reader, evaluator: Mapping[str, Any], run: dict[str, Any]) -> None:
    out = reader.out
    for name, value in evaluator.items():
        where = f"evaluator.{name}"
        if name == "timeout":
            out.timeout_s = reader.number(where, value, minimum=1e-3)
            out.mapped.append(f"{where} -> each stage's timeout_s {out.timeout_s:g}")
        elif name == "memory_limit_mb" and value is not None:
            out.memory_mb = reader.integer(where, value, minimum=1)
            out.mapped.append(f"{where} -> memory_mb {out.memory_mb}")
        elif name == "cascade_evaluation":
            out.cascade = bool(value)
            out.mapped.append(f"{where} -> {'cascade stages' if value else 'no cascade'}")
        elif name == "cascade_thresholds":
            if not isinstance(value, list):
                raise ProblemSpecError(reader.path, where, f"found {value!r}; expected a list")
            out.thresholds = tuple(reader.number(where, v, minimum=-math.inf) for v in value)
            out.mapped.append(f"{where} -> stage thresholds on fitness {list(out.thresholds)}")
        elif name == "parallel_evaluations":
            run["workers"] = reader.integer(where, value, minimum=1)
            out.mapped.append(f"{where} -> workers {run['workers']}")
        else:
            reader.ignore(where)


def _modes(reader: _Reader, data: Mapping[str, Any], run: dict[str, Any]) -> None:
    diff = data.get("diff_based_evolution", True)
    rewrites = data.get("allow_full_rewrites", False)
    if "diff_based_evolution" not in data and "allow_full_rewrites" not in data:
        return
    if diff and not rewrites:
        run["modes"] = {"diff": 0.8, "rewrite": 0.0, "crossover": 0.2}
        what = "diffs and crossovers, no full rewrites"
    elif not diff:
        run["modes"] = {"diff": 0.0, "rewrite": 0.8, "crossover": 0.2}
        what = "full rewrites and crossovers, no diffs"
    else:
        what = "diffs, rewrites and crossovers (evoforge's default weights)"
    reader.out.mapped.append(f"diff_based_evolution/allow_full_rewrites -> modes: {what}")


def _key_env(reader: _Reader, where: str, value: Any) -> str | None:
    if value is None:
        return None
    match = _ENV_REF.match(str(value).strip())
    if match:
        return match.group(1)
    reader.ignore("llm.api_key")  # never echo the value
    return None


def _litellm(name: str) -> str:
    """OpenEvolve calls every model through an OpenAI-compatible client: ``openai/<name>``."""
    return f"openai/{name}"


def _is_openai(base: str) -> bool:
    return base.rstrip("/") == "https://api.openai.com/v1"


def _suffix(key: str, value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    if key == "file_suffix":
        return value if value.startswith(".") else f".{value}"
    return _LANGUAGE_SUFFIX.get(value.lower())
