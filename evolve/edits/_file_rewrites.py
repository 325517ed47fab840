"""Whole-file rewrites in a repository bundle: a fenced block headed by the file's path.

Asked to change several files, models often answer with the whole new file in a fence rather
than SEARCH/REPLACE blocks, naming the file the way Markdown readers show it::

    ```python slowstats/core.py          the info string after the language (or alone)
    ### slowstats/core.py                a heading, a bare or `quoted` or **bold** path,
    `slowstats/core.py`:                 File: ..., on the last line before the fence
    Here is the new `slowstats/core.py`: prose naming exactly one evolving file
    ```python
    # slowstats/core.py                  a comment naming the path as the fence's first line

Each such fence replaces that one file of the bundle (its EVOLVE-BLOCKs, or the whole file
when it evolves whole, under the same rules as a single-file rewrite); several fences replace
several files; files not named are kept. A fence explicitly headed by a path that is not one of
the bundle's files is refused with the list of those that are. Prose that merely mentions a
path outside the bundle names nothing. Answers with CRLF line ends, tabs or trailing spaces on
the heading lines read the same.
"""

from __future__ import annotations

from evoforge.evolve.edits._files import heading_path
from evoforge.evolve.edits._parse import EditError, Fence, fenced_blocks
from evoforge.problems import BundleError, file_sections, header_path

_COMMENTS = ("#", "//", "--", ";", "/*", "<!--")


def file_rewrites(parent: str, lines: list[str]) -> list[tuple[int, int, str]]:
    """``(start, end, code)`` per fence of ``lines`` that names a file of the bundle
    ``parent``: the file's section in ``parent`` and its new text, last section first. Empty
    when ``parent`` is not a bundle or no fence names a file.

    Raises:
        EditError: a fence is headed by a path outside the bundle, or two fences name the
            same file.
    """
    try:
        sections = file_sections(parent)
    except BundleError:
        return []
    if not sections:
        return []
    found: dict[str, str] = {}
    for fence in fenced_blocks(lines):
        named = _named(fence, lines, tuple(sections))
        if named is None:
            continue
        path, code = named
        if path not in sections:
            raise EditError(
                f"the code block at line {fence.line + 1} is headed by {path!r}, which is not "
                f"one of the files this problem evolves ({', '.join(sections)}); head each "
                "file's block with one of those paths"
            )
        if path in found:
            raise EditError(f"two code blocks rewrite {path}; give each file's new text once")
        found[path] = code
    spans = sorted(((*sections[p], code) for p, code in found.items()), reverse=True)
    return [(start, end, code) for start, end, code in spans]


def _named(fence: Fence, lines: list[str], paths: tuple[str, ...]) -> tuple[str, str] | None:
    """``(path, code)`` when ``fence`` names a file (see the module docstring)."""
    code = fence.content.replace("\r\n", "\n").replace("\r", "\n")
    tokens = [t.removeprefix("title=").strip("\"'") for t in fence.info.replace(":", " ").split()]
    for index, token in enumerate(tokens):
        path = _explicit(token)
        # the first word is the language unless it is a path of its own (```pkg/core.py)
        if path is not None and (index > 0 or path in paths or "/" in path):
            return path, code
    first, _, rest = code.partition("\n")
    path = _comment_path(first, paths)
    if path is not None:
        return path, rest
    before = _line_before(lines, fence.line)
    path = _explicit(before)
    if path is not None:
        return path, code
    mentioned = [p for p in paths if _mentions(before, p)]
    if len(mentioned) == 1:
        return mentioned[0], code
    return None


def _explicit(text: str) -> str | None:
    """The path ``text`` consists of (a heading, a bare, quoted or bold path); None for prose."""
    text = text.strip()
    if not text:
        return None
    return heading_path(text)


def _comment_path(line: str, paths: tuple[str, ...]) -> str | None:
    """The evolving file a fence's first line names as a comment (``# pkg/core.py``, the
    bundle's own header), else None. Only files of the bundle: a file's real first comment
    is never taken for a heading unless it is exactly one of their paths."""
    text = line.strip()
    if (path := header_path(text)) is not None:
        return path
    for mark in _COMMENTS:
        if text.startswith(mark):
            body = text[len(mark) :].strip().removesuffix("*/").removesuffix("-->").strip()
            path = heading_path(body) if body else None
            return path if path in paths else None
    return None


def _line_before(lines: list[str], index: int) -> str:
    for line in reversed(lines[:index]):
        if line.strip():
            return line.strip()
    return ""


def _mentions(line: str, path: str) -> bool:
    """``line`` names ``path`` as a word of its own (not as part of a longer path)."""
    start = line.find(path)
    while start != -1:
        end = start + len(path)
        left = line[start - 1] if start else " "
        right = line[end] if end < len(line) else " "
        if left in " \t`'\"*(:" and right in " \t`'\"*):,.":
            return True
        start = line.find(path, start + 1)
    return False
