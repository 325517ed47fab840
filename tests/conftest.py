"""Fixtures shared by every test package."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from hypothesis import settings

# CI machines are shared and noisy: a property test's first example can take 100x its usual
# time (an import, a cold cache, a neighbour's load). Speed is measured by bench/, never by
# a per-example deadline, which fails such a run as "Flaky" while the property holds.
settings.register_profile("evoforge", deadline=None)
settings.load_profile("evoforge")

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory, monkeypatch):
    """Never read or write the user's home, working directory or default archive."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("EVOFORGE_DB", str(home / "evoforge.db"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.chdir(home)


@pytest.fixture
def make_problem(tmp_path):
    """Write a problem folder from texts; returns its path."""

    def make(spec: str, seed: str | None = None, name: str = "prob") -> Path:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "problem.py").write_text(textwrap.dedent(spec))
        if seed is not None:
            (folder / "seed.py").write_text(textwrap.dedent(seed))
        return folder

    return make


TRIVIAL_SPEC = """
    name = "tiny"
    objectives = {"score": "maximize"}
    descriptors = {"a": (-10.0, 10.0, 4)}
    preload = []
    timeout_s = 5
    memory_mb = 512

    def evaluate(output):
        a, b = output
        return {"score": -(a - 1.0) ** 2 - (b - 2.0) ** 2, "a": a}
"""
TRIVIAL_SEED = """
    # EVOLVE-BLOCK-START
    def main():
        a = 0.5
        b = 0.25
        return [a, b]
    # EVOLVE-BLOCK-END
"""
