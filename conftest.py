"""The documentation's code blocks are tests: README.md and docs/**/*.md are collected here, one
test per block (``tests/docs/examples.py`` says how each kind of block runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
PAGES = (ROOT / "README.md", ROOT / "docs")


def pytest_collect_file(file_path: Path, parent: Any) -> Any:
    if file_path.suffix != ".md" or not any(
        file_path == page or file_path.is_relative_to(page) for page in PAGES
    ):
        return None  # other Markdown (a problem's README) is not a page of the docs
    # Imported here, so that running a test file does not import Sybil.
    from sybil.integration.pytest import pytest_integration

    from tests.docs.examples import DOCS

    return pytest_integration(DOCS)(file_path, parent)
