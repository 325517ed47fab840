"""Syntax check of a candidate program before it is spent on an evaluation.

CPython's ``compile()`` decides; tree-sitter locates the first broken spot and quotes it.
``compile()`` also catches what tree-sitter's grammar accepts but CPython rejects (``return``
outside a function, ``break`` outside a loop, ``del f()``, ...).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

_SNIPPET = 40  # characters of offending text quoted in a message


@functools.cache
def parser() -> tree_sitter.Parser:
    """The process-wide tree-sitter Python parser (created on first use)."""
    import tree_sitter
    import tree_sitter_python

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))


def check_program_syntax(source: str, language: str) -> str | None:
    """The syntax problem of a candidate in ``language`` (None when it has none, or when its
    language is not Python: its evaluator reports what does not compile).

    A repository bundle (:func:`evoforge.problems.file_sections`) is checked file by file,
    its ``.py`` files only, since files concatenated are not one module (a second file's
    ``from __future__`` import would read as misplaced); the message names the file.
    """
    from evoforge.problems import BundleError, split_bundle

    try:
        files = split_bundle(source)
    except BundleError:
        return check_syntax(source) if language == "python" else None
    for path, text in files.items():
        if path.endswith(".py") and (problem := check_syntax(text)) is not None:
            return f"{path}: {problem}"
    return None


def check_syntax(source: str) -> str | None:
    """Return None when ``source`` is valid Python, else ``"line L, column C: what is wrong"``.

    Lines and columns are 1-based; the column counts characters, not bytes.

    ``compile()`` runs first: it is the authority (the candidate runs on this CPython, and
    tree-sitter's grammar can lag behind new syntax), and valid programs, the common case,
    then cost one compile only. When it fails, tree-sitter's first ERROR or MISSING node gives
    the position and the offending text, and CPython's message is added in parentheses; what
    tree-sitter accepts (``return`` outside a function, ...) is reported from CPython alone.
    """
    try:
        compile(source, "<candidate>", "exec", dont_inherit=True)
        return None
    except SyntaxError as exc:  # IndentationError and TabError are SyntaxErrors too
        text = (exc.text or "").strip()
        python, quoted = exc.msg, f" at {_snippet(text)!r}" if text else ""
        where = f"line {exc.lineno or 1}, column {exc.offset or 1}"
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, too deep, too big
        python, quoted = f"cannot compile: {type(exc).__name__}: {str(exc)[:200]}", ""
        where = "line 1, column 1"
    located = _tree_sitter_problem(source)
    return f"{located} ({python})" if located else f"{where}: {python}{quoted}"


def _tree_sitter_problem(source: str) -> str | None:
    data = source.encode("utf-8", "surrogatepass")
    node = _first_problem(parser().parse(data).root_node)
    if node is None:
        return None
    row, col = node.start_point
    line_start = node.start_byte - col
    column = len(data[line_start : node.start_byte].decode("utf-8", "replace")) + 1
    if node.is_missing:
        what = f"missing {node.type!r}"
    else:
        text = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
        what = f"invalid syntax at {_snippet(text)!r}" if text.strip() else "invalid syntax"
    return f"line {row + 1}, column {column}: {what}"


def _snippet(text: str) -> str:
    first = text.strip().split("\n", 1)[0]
    return first if len(first) <= _SNIPPET else first[: _SNIPPET - 3] + "..."


def _first_problem(root: tree_sitter.Node) -> tree_sitter.Node | None:
    """The first ERROR or MISSING node in document order, or None."""
    if not root.has_error:
        return None
    node = root
    while True:
        if node.is_error or node.is_missing:
            return node
        for child in node.children:
            if child.is_missing or child.is_error or child.has_error:
                node = child
                break
        else:
            return node  # has_error but no child shows it: report the node itself
