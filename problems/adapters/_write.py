"""Writing generated problem folders: under the evoforge cache (named by content, so the same
input gives the same folder) or under a folder the user chose."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

from evoforge.problems import cache_folder, write_if_changed

GENERATED = "# Written by an evoforge adapter from {source}; edit that, not this file.\n"


def write_folder(name: str, files: Mapping[str, str], folder: Path | None) -> Path:
    """Write ``files`` (relative name -> text) into ``folder/name``, or into the cache.

    Files whose text is unchanged are left alone (their mtime too), so adapting the same input
    again costs a few small reads.
    """
    content = "\0".join(f"{key}\0{text}" for key, text in sorted(files.items()))
    target = folder / name if folder is not None else cache_folder(name, content, "")
    target.mkdir(parents=True, exist_ok=True)
    for relative, text in files.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        write_if_changed(path, text)
    return target


def identifier(text: str, prefix: str) -> str:
    """``"19_ReLU"`` -> ``"kb_19_relu"``: a problem name from a file or folder name."""
    cleaned = re.sub(r"\W+", "_", text.lower()).strip("_") or "task"
    name = f"{prefix}_{cleaned}" if prefix else cleaned
    return name if name.isidentifier() else f"p_{name}"


def sha256(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()
