"""Rewrites that elide code they leave alone (``# ... rest unchanged ...``), filled from the parent.

Asked for the whole program, models shorten what they did not change: a line
``# ... (the other functions are unchanged) ...`` where three functions stood, or a function
whose body is only ``...``. Taken as written, such a child has lost those functions, and the
name check refuses it (a wasted call) or, where nothing else reads them, the evaluator fails.
What the model means is plain: the parent's code goes there. So, in Python:

- a line of its own that is an *elision* (``...``, or a comment holding ``...``/``…`` or
  saying "unchanged", "omitted", "same as before"...) at the code's top level stands for the
  parent's top-level statements that define names the rewrite no longer defines, each where
  it stood: between the statements that are around it in the parent and still in the
  rewrite (with no elision there, the rewrite deleted it, and it stays deleted);
- a function whose body is only ``...``, or ``pass`` with an elision comment (a docstring
  allowed), where the parent's function of that name (a method: of that class) has a real
  body, is the parent's function.

The same holds for a SEARCH/REPLACE block: its REPLACE text is filled from its SEARCH text.

Nothing else changes (but for a top-level ``pass`` beside such an elision: the placeholder
of code now filled in). When the rewrite has no elision, or its code does not parse with each
elision read as ``...``, or the filled code does not parse, it is returned as written: the
syntax and name checks then say what is wrong, as before. Whatever the model wrote besides
the elisions, new functions included, is kept.
"""

from __future__ import annotations

import ast

from evoforge.evolve.checks import bindings, statement_lines
from evoforge.evolve.edits._indent import indent_of

_SAYS_ELIDED = (
    "unchanged",
    "remains the same",
    "remain the same",
    "same as before",
    "same as above",
    "as before",
    "omitted",
    "for brevity",
    "no changes",
    "not changed",
)
_DOTS = ("...", "…")
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)
_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def is_elision(line: str) -> bool:
    """Whether ``line`` stands for code left out: ``...`` (a comment after it or not), a
    comment that says so, or ``pass`` with such a comment."""
    code, _, comment = line.strip().partition("#")
    code = code.strip()
    if code in _DOTS:
        return True
    if code not in ("", "pass") or not comment:
        return False
    words = comment.lstrip("#").strip().lower()
    return any(dots in words for dots in _DOTS) or any(say in words for say in _SAYS_ELIDED)


def fill_elisions(old: str, new: str) -> str:
    """``new``, the model's code for what was ``old``, with its elisions filled from ``old``.

    Both are Python code at top level (a module, or an EVOLVE-BLOCK region's content).
    """
    lines = new.split("\n")
    marks = {i for i, line in enumerate(lines) if is_elision(line)}
    if not marks and not any(dots in new for dots in _DOTS):
        return new  # no elision line, and no function body of ``...`` either
    probe = [f"{indent_of(line)}..." if i in marks else line for i, line in enumerate(lines)]
    try:
        old_tree, new_tree = ast.parse(old), ast.parse("\n".join(probe))
    except _PARSE_ERRORS:
        return new
    old_lines = old.split("\n")
    changes = _stubs_filled(old_tree.body, new_tree.body, old_lines)
    statements = _statements_filled(old_tree.body, new_tree.body, old_lines, lines, marks)
    if statements:  # a top-level ``pass`` held the place of what is now filled in
        statements += [(n.lineno - 1, n.lineno, []) for n in new_tree.body if _lone_pass(n, lines)]
    changes += statements
    if not changes:
        return new
    for first, last, text in sorted(changes, reverse=True):
        lines[first:last] = text
    filled = "\n".join(lines)
    try:
        ast.parse(filled)
    except _PARSE_ERRORS:
        return new
    return filled


Change = tuple[int, int, list[str]]
"""Lines ``[first, last)`` of the new code (0-based) and the lines that replace them."""


def _stubs_filled(
    old_body: list[ast.stmt], new_body: list[ast.stmt], old_lines: list[str]
) -> list[Change]:
    """Functions of ``new_body`` that are stubs standing for the same-named real ones of
    ``old_body`` (methods of a class of the same name too), replaced by those."""
    olds = {node.name: node for node in old_body if isinstance(node, _Definition)}
    changes: list[Change] = []
    for node in new_body:
        was = olds.get(node.name) if isinstance(node, _Definition) else None
        if was is None or type(was) is not type(node):
            continue
        if isinstance(node, ast.ClassDef) and isinstance(was, ast.ClassDef):
            changes += _stubs_filled(was.body, node.body, old_lines)
        elif was.col_offset == node.col_offset and _is_stub(node) and not _is_stub(was):
            first, last = statement_lines(was)
            changes.append((*statement_lines(node), old_lines[first:last]))
    return changes


def _lone_pass(node: ast.stmt, lines: list[str]) -> bool:
    """A top-level ``pass`` on a line of its own (no code of the model's is lost with it)."""
    return isinstance(node, ast.Pass) and lines[node.lineno - 1].split("#")[0].strip() == "pass"


def _is_stub(node: ast.stmt) -> bool:
    """A function whose body (past its docstring) is only ``...`` (an elision line is read as
    ``...``, so ``pass  # unchanged`` is one too)."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = node.body
    if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:] if isinstance(body[0].value.value, str) else body
    (only, *rest) = body
    return (
        not rest
        and isinstance(only, ast.Expr)
        and isinstance(only.value, ast.Constant)
        and only.value.value is Ellipsis
    )


def _statements_filled(
    old_body: list[ast.stmt],
    new_body: list[ast.stmt],
    old_lines: list[str],
    new_lines: list[str],
    marks: set[int],
) -> list[Change]:
    """The parent's top-level statements whose names ``new_body`` lost, each put in place of
    the first top-level elision where it stood: after the statement before it in the parent
    (the start, when none is still defined) and before the one after it. One with no elision
    there is left out, as the rewrite left it."""
    elisions = [
        node.lineno - 1
        for node in new_body
        if node.lineno - 1 in marks
        and isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and node.value.value is Ellipsis
    ]
    if not elisions:
        return []
    defined = bindings(new_body)
    where: dict[str, int] = {}  # a name the new code defines -> its line
    for node in new_body:
        for name in bindings([node]):
            where.setdefault(name, node.lineno - 1)
    names = [bindings([node]) for node in old_body]
    present = [  # each parent statement's line in the new code, where it is still defined
        min((where[name] for name in own & defined), default=None) for own in names
    ]
    runs: list[list[int]] = []  # [elision line, index of the run's first statement, last's]
    in_run = False
    anchor = -1  # the new line of the last kept statement seen so far in the parent's order
    for index, line in enumerate(present):
        if line is not None:
            anchor, in_run = line, False
        elif in_run and names[index]:
            runs[-1][2] = index  # (and the statements defining nothing in between)
        elif names[index]:
            after = next((p for p in present[index + 1 :] if p is not None), len(new_lines))
            at = next((e for e in elisions if anchor < e < after), None)
            if at is not None:  # no elision where it stood: the rewrite dropped it
                runs.append([at, index, index])
            in_run = at is not None
    filled: dict[int, list[str]] = {}
    for at, first, last in runs:
        piece = filled.setdefault(at, [])
        start, end = statement_lines(old_body[first])[0], statement_lines(old_body[last])[1]
        piece += (["", ""] if piece else []) + old_lines[start:end]
    return [(at, at + 1, piece) for at, piece in filled.items()]
