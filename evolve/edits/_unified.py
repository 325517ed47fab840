"""Unified-diff answers, read as the SEARCH/REPLACE blocks they mean.

Asked for an edit, models often answer in the format they have seen most, ``diff -u``'s:
hunks headed by ``@@ -12,7 +12,8 @@``, lines prefixed by a space (context), ``-`` (removed)
or ``+`` (added). evoforge's prompts show earlier attempts that way too. Such an answer means
one SEARCH/REPLACE block per hunk (context and removed lines to find, context and added lines
to put there), so it is read as those blocks and applied by the same rules, tolerant ones
included. The hunk's line numbers are ignored: models count them wrong more often than right,
and a block is located by its text. (``diff -u``'s three lines of context often reach an
EVOLVE-BLOCK marker; the applier drops such context, as it does a block's.)

What models do to the format is accepted where the meaning is plain: a context line without
its leading space (an empty line most of all) is context; ``--- a/x`` / ``+++ b/x`` headers,
``diff --git`` and ``index`` lines are skipped, the ``+++`` path heading the blocks (for a
repository bundle: the file they apply in); prose after a hunk ends it. Like the rest of the
parser this is a line scan, linear in the answer.
"""

from __future__ import annotations

from evoforge.evolve.edits._parse import MAX_BLOCKS, EditBlock, EditError

_HEADERS = ("diff --git ", "index ", "new file mode", "deleted file mode")


def is_hunk_header(line: str) -> bool:
    """``@@ -a,b +c,d @@`` (anything after it), or a bare ``@@`` as models also write."""
    text = line.strip()
    return text == "@@" or (text.startswith("@@ ") and "@@" in text[3:])


def _file_header(lines: list[str], i: int) -> bool:
    """``--- a/x`` followed by ``+++ b/x`` (a removed line ``-- x`` is not a header)."""
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def _prefixed(line: str) -> bool:
    return line[:1] in ("+", "-", " ")


def unified_blocks(lines: list[str]) -> list[EditBlock]:
    """The hunks of a unified diff in ``lines`` as SEARCH/REPLACE blocks (none: not a diff).

    Raises:
        EditError: a hunk only adds lines (nothing to locate it by), or there are more than
            :data:`MAX_BLOCKS` hunks.
    """
    blocks: list[EditBlock] = []
    path = ""
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if line.startswith("+++ "):
            path = _header_path(line[4:])
        if not is_hunk_header(line):
            i += 1
            continue
        body, i = _hunk_body(lines, i + 1)
        number = len(blocks) + 1
        if number > MAX_BLOCKS:
            raise EditError(
                f"the answer has more than {MAX_BLOCKS} diff hunks; propose a focused change, "
                "or answer with the whole program in one ```python fenced block"
            )
        search = [text[1:] if _prefixed(text) else text for text in body if text[:1] != "+"]
        replace = [text[1:] if _prefixed(text) else text for text in body if text[:1] != "-"]
        if not any(text[:1] in ("+", "-") for text in body):
            continue  # a hunk that changes nothing (all context)
        if not "".join(search).strip():
            raise EditError(
                f"diff hunk {number} only adds lines, with no context line to say where; "
                "give each hunk a few unchanged lines around the change, or use a "
                "SEARCH/REPLACE block"
            )
        blocks.append(
            EditBlock(
                number,
                "".join(t + "\n" for t in search),
                "".join(t + "\n" for t in replace),
                heading=path,
            )
        )
    return blocks


def _hunk_body(lines: list[str], start: int) -> tuple[list[str], int]:
    """The lines of the hunk that starts at ``start``, and the index after it.

    A hunk ends at the next hunk or file header, at a fence line, or at the end; lines after
    its last prefixed line that carry no prefix (prose after the diff, blank lines) are not
    part of it.
    """
    end = start
    while end < len(lines):
        line = lines[end]
        stripped = line.strip()
        if (
            is_hunk_header(line)
            or line.startswith(_HEADERS)
            or _file_header(lines, end)
            or stripped.startswith(("```", "~~~"))
        ):
            break
        end += 1
    body = [line for line in lines[start:end] if not line.startswith("\\ No newline")]
    last = max((k for k, line in enumerate(body) if _prefixed(line)), default=-1)
    return body[: last + 1], end


def _header_path(text: str) -> str:
    """``b/slowstats/core.py`` (with a timestamp after a tab, perhaps) -> ``slowstats/core.py``."""
    path = text.split("\t", 1)[0].strip()
    if path == "/dev/null":
        return ""
    return path[2:] if path.startswith(("a/", "b/")) else path
