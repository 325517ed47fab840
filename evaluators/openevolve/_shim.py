"""A stand-in for OpenEvolve's ``EvaluationResult``, for evaluators written for OpenEvolve that
run where OpenEvolve is not installed.

OpenEvolve evaluators return a dict of metrics or an
``openevolve.evaluation_result.EvaluationResult`` (metrics plus artifacts). When ``openevolve``
cannot be imported, :func:`install` puts modules named ``openevolve`` and
``openevolve.evaluation_result`` in ``sys.modules`` holding :class:`EvaluationResult`, a
dataclass with the same fields and methods, so ``from openevolve.evaluation_result import
EvaluationResult`` works unmodified. Where OpenEvolve is installed, its own class is used.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from dataclasses import dataclass, field
from typing import Any


@dataclass
class EvaluationResult:
    """Metrics (name -> number) and artifacts (name -> text or bytes) of one evaluation."""

    metrics: dict[str, float]
    artifacts: dict[str, str | bytes] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, metrics: dict[str, float]) -> EvaluationResult:
        return cls(metrics=metrics)

    def to_dict(self) -> dict[str, float]:
        return self.metrics

    def has_artifacts(self) -> bool:
        return bool(self.artifacts)

    def get_artifact_keys(self) -> list[str]:
        return list(self.artifacts)

    def get_artifact_size(self, key: str) -> int:
        value: Any = self.artifacts.get(key, b"")
        if isinstance(value, bytes):
            return len(value)
        return len(str(value).encode("utf-8"))

    def get_total_artifact_size(self) -> int:
        return sum(self.get_artifact_size(key) for key in self.artifacts)


def install() -> bool:
    """Provide ``openevolve.evaluation_result.EvaluationResult`` if OpenEvolve is missing;
    returns whether the stand-in was installed."""
    if "openevolve" in sys.modules or importlib.util.find_spec("openevolve") is not None:
        return False
    package = types.ModuleType("openevolve")
    package.__path__ = []  # a package, so submodule imports resolve through sys.modules
    package.__doc__ = "evoforge's stand-in for OpenEvolve (not installed here)"
    result = types.ModuleType("openevolve.evaluation_result")
    result.EvaluationResult = EvaluationResult  # type: ignore[attr-defined]
    EvaluationResult.__module__ = result.__name__
    package.evaluation_result = result  # type: ignore[attr-defined]
    package.EvaluationResult = EvaluationResult  # type: ignore[attr-defined]
    sys.modules["openevolve"] = package
    sys.modules["openevolve.evaluation_result"] = result
    return True
