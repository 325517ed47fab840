"""Bundles: several files of a repository as one program text.

A repository problem evolves several files, but the engine (edits, archive, novelty, prompts)
works on one source text. A bundle is that text: each file under a header line naming its
path, in a fixed order::

    # === FILE: slowstats/core.py ===
    ...the file, with its own EVOLVE-BLOCKs...
    # === FILE: slowstats/window.py ===
    # EVOLVE-BLOCK-START: whole file
    ...a file without EVOLVE-BLOCKs, evolved whole...
    # EVOLVE-BLOCK-END: whole file

The header and the whole-file markers sit outside every EVOLVE-BLOCK, so they are frozen like
any code outside a block: an edit can change a file's content but never add, drop or rename a
file. The format is self-describing (:func:`split_bundle` needs nothing but the text), reads
naturally to a model, and for Python files the whole bundle still parses as Python (the
headers are comments), so the offline model's tree-sitter search works on it unchanged.

A whole file that did not end with a newline says so in its end marker, so the file comes back
byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping

from evoforge.problems._blocks import END_MARKER, START_MARKER, BlockError, find_blocks

HEADER_PREFIX = "# === FILE: "
HEADER_SUFFIX = " ==="
WHOLE_START = f"# {START_MARKER}: whole file"
WHOLE_END = f"# {END_MARKER}: whole file"
WHOLE_END_NO_NEWLINE = f"{WHOLE_END} (no newline at end)"


class BundleError(ValueError):
    """A bundle is malformed, or a file cannot be put in one; the message says which and why."""


def header(path: str) -> str:
    """The header line of ``path`` in a bundle (without its newline)."""
    return f"{HEADER_PREFIX}{path}{HEADER_SUFFIX}"


def header_path(line: str) -> str | None:
    """The path a header line names; None when ``line`` is not a header."""
    text = line.rstrip("\r\n")
    if text.startswith(HEADER_PREFIX) and text.endswith(HEADER_SUFFIX):
        path = text[len(HEADER_PREFIX) : len(text) - len(HEADER_SUFFIX)]
        return path or None
    return None


def make_bundle(files: Mapping[str, str]) -> str:
    """The bundle of ``files`` (path -> text), in the mapping's order.

    A file with an EVOLVE-BLOCK keeps its own blocks (only they may change); a file without
    one is wrapped in whole-file markers (it evolves whole).

    Raises:
        BundleError: a file holds a line that would read as a bundle header or whole-file
            marker (it could not be split back unambiguously), its EVOLVE-BLOCK markers are
            unbalanced, or a path is empty or has a newline.
    """
    parts: list[str] = []
    for path, text in files.items():
        if not path or "\n" in path or "\r" in path:
            raise BundleError(f"cannot bundle a file named {path!r}: give a plain relative path")
        for number, line in enumerate(text.split("\n"), start=1):
            if header_path(line) is not None or line.startswith((WHOLE_START, WHOLE_END)):
                raise BundleError(
                    f"{path}: line {number} ({line[:80]!r}) reads as an evoforge bundle "
                    "line; change that line (evoforge puts such lines between files)"
                )
        parts.append(header(path) + "\n")
        if START_MARKER in text or END_MARKER in text:
            try:
                find_blocks(text, origin=path)
            except BlockError as exc:
                raise BundleError(str(exc)) from None
            parts.append(text if text.endswith("\n") or not text else text + "\n")
        elif text.endswith("\n") or not text:
            parts.append(f"{WHOLE_START}\n{text}{WHOLE_END}\n")
        else:
            parts.append(f"{WHOLE_START}\n{text}\n{WHOLE_END_NO_NEWLINE}\n")
    return "".join(parts)


def file_sections(source: str) -> dict[str, tuple[int, int]]:
    """Each file's section of a bundle: character offsets ``[start, end)`` of what follows its
    header line, up to the next header. Empty for a text that is not a bundle.

    Raises:
        BundleError: two headers name the same path, or text comes before the first header.
    """
    sections: dict[str, tuple[int, int]] = {}
    current: str | None = None
    start = offset = 0
    for line in source.splitlines(keepends=True):
        path = header_path(line)
        if path is not None:
            if current is not None:
                sections[current] = (start, offset)
            elif source[:offset].strip():
                raise BundleError("the bundle has text before its first file header")
            if path in sections:
                raise BundleError(f"the bundle names {path} twice")
            current, start = path, offset + len(line)
        offset += len(line)
    if current is not None:
        sections[current] = (start, offset)
    return sections


def split_bundle(source: str) -> dict[str, str]:
    """The files of a bundle (path -> exact text), whole-file markers removed.

    Raises:
        BundleError: the text is not a bundle, or it is malformed (see :func:`file_sections`).
    """
    sections = file_sections(source)
    if not sections:
        raise BundleError(
            f"the program is not a repository bundle: it has no '{HEADER_PREFIX}<path>"
            f"{HEADER_SUFFIX}' line"
        )
    files: dict[str, str] = {}
    for path, (start, end) in sections.items():
        text = source[start:end]
        lines = text.splitlines(keepends=True)
        if lines and lines[0].rstrip("\r\n") == WHOLE_START:
            last = lines[-1].rstrip("\r\n") if len(lines) > 1 else ""
            if last == WHOLE_END:
                text = "".join(lines[1:-1])
            elif last == WHOLE_END_NO_NEWLINE:
                text = "".join(lines[1:-1])
                text = text[:-1] if text.endswith("\n") else text
        files[path] = text
    return files
