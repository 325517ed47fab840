"""The rest of a repository, summarised for the prompt: its tree and its Python signatures.

A repository problem's prompt shows the evolving files in full (they are the program); what
they call lives elsewhere in the repository, so the problem's description ends with the
repository's files (up to :data:`MAX_PATHS`) and the top-level ``def``/``class`` lines of its
other Python files (up to :data:`MAX_SIGNATURE_CHARS`), enough for a model to call what exists
instead of guessing. Costs one parse per Python file, once, when the repository is adapted.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Collection
from pathlib import Path

MAX_PATHS = 200
MAX_SIGNATURE_CHARS = 4000
_SKIPPED = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "node_modules", ".mypy_cache"}
)


def repository_files(folder: Path) -> list[str]:
    """Relative paths of the repository's files, sorted (tool and cache folders left out)."""
    found = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED and not d.startswith("."))
        found += [str(Path(root, n).relative_to(folder)) for n in names]
    return sorted(found)


def signatures(source: str) -> list[str]:
    """The top-level ``def`` and ``class`` lines of a Python source (methods indented)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    lines = source.splitlines()
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append(lines[node.lineno - 1].rstrip())
            if isinstance(node, ast.ClassDef):
                found += [
                    lines[item.lineno - 1].rstrip()
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                ]
    return found


def summary(folder: Path, evolving: Collection[str]) -> str:
    """The repository's tree and the signatures of its other Python files, as prompt text."""
    paths = repository_files(folder)
    shown = paths[:MAX_PATHS]
    parts = ["Files of the repository (the evolving ones are marked *):"]
    parts += [f"  {p}{' *' if p in evolving else ''}" for p in shown]
    if len(paths) > len(shown):
        parts.append(f"  ... and {len(paths) - len(shown)} more")
    budget = MAX_SIGNATURE_CHARS
    signature_parts: list[str] = []
    for path in paths:
        if not path.endswith(".py") or path in evolving or budget <= 0:
            continue
        try:
            lines = signatures((folder / path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if lines:
            block = "\n".join([f"{path}:", *(f"  {line}" for line in lines)])
            signature_parts.append(block[:budget])
            budget -= len(block)
    if signature_parts:
        parts.append("Signatures in the other Python files:")
        parts += signature_parts
    return "\n".join(parts)
