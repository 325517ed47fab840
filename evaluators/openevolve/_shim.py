"""A stand-in for OpenEvolve's ``EvaluationResult``, for evaluators written for OpenEvolve that
run where OpenEvolve is not installed.

OpenEvolve evaluators return a dict of metrics or an
``openevolve.evaluation_result.EvaluationResult`` (metrics plus artifacts). When ``openevolve``
cannot be imported, :func:`install` puts modules named ``openevolve`` and
``openevolve.evaluation_result`` in ``sys.modules`` holding :class:`EvaluationResult`, a
dataclass with the same fields and methods, so ``from openevolve.evaluation_result import
EvaluationResult`` works unmodified. Where OpenEvolve is installed (and imports), its own class
is used.

"Cannot be imported" is decided by importing it, not by finding it: a folder named
``openevolve`` that is not an importable OpenEvolve (a source checkout without its
dependencies, the usual place users run examples from) must not hide the stand-in, or every
evaluation fails with ``ModuleNotFoundError``. The runner also drops the engine's working
directory from ``sys.path`` (:mod:`evoforge.evaluators.openevolve.__main__`), so such a folder
is never found in the first place.
"""

from __future__ import annotations

import importlib
import importlib.machinery
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
    """Provide ``openevolve.evaluation_result.EvaluationResult`` unless OpenEvolve's own
    imports; returns whether the stand-in was installed."""
    if _real_openevolve():
        return False
    package = types.ModuleType("openevolve")
    package.__path__ = []  # a package, so submodule imports resolve through sys.modules
    # specs, so importlib.util.find_spec("openevolve") in an evaluator answers, not raises
    package.__spec__ = importlib.machinery.ModuleSpec("openevolve", None, is_package=True)
    package.__doc__ = "evoforge's stand-in for OpenEvolve (not installed here)"
    result = types.ModuleType("openevolve.evaluation_result")
    result.__spec__ = importlib.machinery.ModuleSpec(result.__name__, None)
    result.EvaluationResult = EvaluationResult  # type: ignore[attr-defined]
    EvaluationResult.__module__ = result.__name__
    package.evaluation_result = result  # type: ignore[attr-defined]
    package.EvaluationResult = EvaluationResult  # type: ignore[attr-defined]
    sys.modules["openevolve"] = package
    sys.modules["openevolve.evaluation_result"] = result
    return True


def _real_openevolve() -> bool:
    """Whether ``openevolve.evaluation_result`` imports as a module with ``EvaluationResult``.

    A failed attempt leaves nothing behind in ``sys.modules``, so the stand-in replaces it
    cleanly (a half-imported package would otherwise answer later imports).
    """
    try:
        if importlib.util.find_spec("openevolve") is None:
            return False
        module = importlib.import_module("openevolve.evaluation_result")
        if hasattr(module, "EvaluationResult"):
            return True
    except Exception:  # any failure to import means: not usable here
        pass
    for name in [n for n in sys.modules if n == "openevolve" or n.startswith("openevolve.")]:
        del sys.modules[name]
    return False
