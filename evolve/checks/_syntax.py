"""Syntax check of a candidate program before it is spent on an evaluation.

CPython's ``compile()`` decides and locates: the line, column and message it gives are the ones
the model is told (see :func:`check_syntax`). The process-wide tree-sitter parser lives here
too, for the offline mutation model.
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

    The line, column and message are CPython's own (the ``SyntaxError`` of ``compile()``),
    never a guess: the message goes back to the model as feedback, and it must point where the
    interpreter that runs the candidate points. A tree-sitter parser recovers from an error
    differently and reports its first ERROR node, which can lie far from the real problem (a
    module docstring at line 1 for a bracket never closed at line 40). ``compile()`` is also
    the authority on what tree-sitter's grammar accepts but CPython rejects (``return``
    outside a function, ``break`` outside a loop, ``del f()``, ...). Valid programs, the
    common case, cost one compile.
    """
    try:
        compile(source, "<candidate>", "exec", dont_inherit=True)
        return None
    except SyntaxError as exc:  # IndentationError and TabError are SyntaxErrors too
        if exc.lineno is None and "\0" in source:  # 3.11 reports a null byte without a place
            return f"{_null_byte(source)}: {exc.msg} (remove the null byte)"
        text = (exc.text or "").strip()
        quoted = f" at {_snippet(text)!r}" if text else ""
        return f"line {exc.lineno or 1}, column {exc.offset or 1}: {exc.msg}{quoted}"
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, too deep, too big
        if "\0" in source:
            return f"{_null_byte(source)}: {exc} (remove the null byte)"
        return f"line 1, column 1: cannot compile: {type(exc).__name__}: {str(exc)[:200]}"


def _null_byte(source: str) -> str:
    """Where the first null byte of ``source`` is, as ``line L, column C``."""
    index = source.index("\0")
    line, line_start = source.count("\n", 0, index) + 1, source.rfind("\n", 0, index) + 1
    return f"line {line}, column {index - line_start + 1}"


def _snippet(text: str) -> str:
    first = text.strip().split("\n", 1)[0]
    return first if len(first) <= _SNIPPET else first[: _SNIPPET - 3] + "..."


GRAMMAR_LANGUAGES = ("python", "c", "cpp")
"""Languages :func:`parses_as` can decide (CPython for Python, tree-sitter for C and C++)."""


@functools.cache
def _clike_parser(language: str) -> tree_sitter.Parser:
    """The process-wide tree-sitter parser for ``c`` or ``cpp`` (created on first use)."""
    import tree_sitter
    import tree_sitter_c
    import tree_sitter_cpp

    grammar = tree_sitter_c.language() if language == "c" else tree_sitter_cpp.language()
    return tree_sitter.Parser(tree_sitter.Language(grammar))


def clike_parser(language: str) -> tree_sitter.Parser:
    """The process-wide tree-sitter parser for ``c``, or for ``cpp`` (any other name)."""
    return _clike_parser("c" if language == "c" else "cpp")


def parses_as(code: str, language: str) -> str | None:
    """Why ``code`` is not a program in ``language`` (None when it parses).

    Python is decided by ``compile()`` (the message is :func:`check_syntax`'s); C and C++ by
    their tree-sitter grammars, which recover from errors, so any ERROR or MISSING node counts.

    Raises:
        ValueError: ``language`` is not one of :data:`GRAMMAR_LANGUAGES` (ask before calling).
    """
    if language == "python":
        return check_syntax(code)
    if language not in GRAMMAR_LANGUAGES:
        raise ValueError(
            f"no grammar for {language!r}; parses_as knows {', '.join(GRAMMAR_LANGUAGES)}"
        )
    root = clike_parser(language).parse(code.encode("utf-8", "surrogatepass")).root_node
    if not root.has_error:
        return None
    node = _first_problem(root)
    row, column = node.start_point
    what = f"missing {node.type!r}" if node.is_missing else "invalid syntax"
    return f"line {row + 1}, column {column + 1}: {what} (tree-sitter-{language})"


def _first_problem(root: tree_sitter.Node) -> tree_sitter.Node:
    """The first ERROR or MISSING node in document order (``root`` has an error)."""
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
