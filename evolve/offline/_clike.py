"""The offline mutation model's view of a C or C++ program (tree-sitter-c / tree-sitter-cpp).

:class:`CProgram` fills the same site lists as the Python :class:`Program` (numbers, swappable
operators, comparisons, whole-line statement runs, named items for crossover), so the shared
operators work unchanged, and adds the sites of the C-only rewrites in
:mod:`evoforge.evolve.offline._crewrites` (``if`` statements, ``&&``/``||`` chains, ``for``
loops). :func:`program_for` picks the reader from the program text: a program whose
EVOLVE-BLOCK markers are ``//`` or ``/*`` comments is C-like, anything else Python.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from evoforge.evolve.checks import clike_parser
from evoforge.evolve.offline._tree import COMPARISONS, SWAPS, Program, text_of
from evoforge.problems import START_MARKER

if TYPE_CHECKING:
    import tree_sitter

C_LANGUAGES = ("c", "cpp")
"""The C-like languages the offline model reads."""

_INTEGER = re.compile(r"([0-9]+)([uUlL]*)")  # decimal only: 0x.., 0b.., 1'000 are left alone
_FLOAT = re.compile(
    r"((?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)([fFlL]?)"
)
_STATEMENT_RUNS = ("compound_statement", "translation_unit", "declaration_list")
_CPP_HINTS = re.compile(
    rb"std::|#include\s*<c[a-z]+>|#include\s*<(?:vector|string|iostream|algorithm)>|\btemplate\s*<|\bnamespace\b|\bclass\b|::"
)


def _parser(language: str) -> tree_sitter.Parser:
    """The process-wide tree-sitter parser for ``c`` or ``cpp`` (shared with the syntax checks)."""
    return clike_parser(language)


def detect_language(text: str) -> str:
    """``python``, ``c`` or ``cpp`` for a program, from its EVOLVE-BLOCK marker comments.

    A marker line starting with ``//`` or ``/*`` means C-like; C++ when the text uses C++
    (``std::``, C++ headers, templates, namespaces, classes), else C.
    """
    for line in text.splitlines():
        if START_MARKER in line:
            if line.lstrip().startswith(("//", "/*")):
                return "cpp" if _CPP_HINTS.search(text.encode("utf-8", "surrogatepass")) else "c"
            return "python"
    return "python"


def program_for(text: str, language: str | None = None) -> Program:
    """The program view for ``text`` (``language`` as from :func:`detect_language` if None).

    Raises:
        BlockError: the text has no well-formed EVOLVE-BLOCK region.
    """
    language = detect_language(text) if language is None else language
    return CProgram(text, language) if language in C_LANGUAGES else Program(text)


class CProgram(Program):
    """A C or C++ program: the shared sites plus the C rewrites' sites."""

    comment = b"/"
    number_types = frozenset({"number_literal"})

    def __init__(self, text: str, language: str = "cpp") -> None:
        if language not in C_LANGUAGES:
            raise ValueError(f"CProgram reads {' or '.join(C_LANGUAGES)}, not {language!r}")
        self.language = language
        self.ifs: list[tree_sitter.Node] = []  # if statements without else
        self.chains: list[tree_sitter.Node] = []  # && / || expressions of two operands
        self.loops: list[tree_sitter.Node] = []  # for statements
        self.updates: list[tree_sitter.Node] = []  # x++; x += e; inside a loop, own lines
        super().__init__(text)

    def _parse(self) -> tree_sitter.Tree:
        return _parser(self.language).parse(self.data)

    def literal(self, node: tree_sitter.Node) -> tuple[str, str, str] | None:
        text = text_of(node).decode("ascii", "replace")
        if match := _INTEGER.fullmatch(text):
            return "integer", match[1], match[2]
        if match := _FLOAT.fullmatch(text):
            return "float", match[1], match[2]
        return None

    def min_int(self, node: tree_sitter.Node, value: int) -> int:
        return 0

    def _collect(self) -> None:
        super()._collect()
        stack = [self.tree.root_node]
        while stack:  # statement runs of bodies that straddle a region (main's, with the
            node = stack.pop()  # block inside it), which _visit, seeing only inner nodes, misses
            if node.is_error or not self._overlaps(node):
                continue
            if node.type in _STATEMENT_RUNS and not self._inside(node):
                self._runs(node)
            stack.extend(node.children)

    def _runs(self, node: tree_sitter.Node) -> None:
        run: list[tree_sitter.Node] = []
        for child in node.named_children:
            if child.type == "comment":
                continue
            if self._inside(child) and self.whole_lines(child) and _statement(child):
                run.append(child)
                continue
            if run:
                self.blocks.append(run)
            run = []
        if run:
            self.blocks.append(run)

    def _visit(self, node: tree_sitter.Node) -> None:
        kind = node.type
        if kind == "number_literal":
            if self.literal(node) is not None:
                self.numbers.append((node, 0.3 if node.text in (b"0", b"1") else 1.0))
        elif kind in ("binary_expression", "assignment_expression"):
            op = node.child_by_field_name("operator")
            if op is None:
                return
            if op.type in COMPARISONS:
                self.comparisons.append(op)
            elif op.type in SWAPS:
                self.operators.append(op)
            if op.type in ("&&", "||") and _pure(node):
                self.chains.append(node)
        elif kind == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "qualified_identifier":
                fn = fn.child_by_field_name("name")
            if fn is not None and fn.type == "identifier" and fn.text in (b"min", b"max"):
                self.operators.append(fn)
        elif kind == "if_statement":
            if node.child_by_field_name("alternative") is None:
                self.ifs.append(node)
        elif kind == "for_statement":
            self.loops.append(node)
        elif kind == "expression_statement" and _update(node) and self.whole_lines(node):
            self.updates.append(node)
        elif kind == "compound_statement":
            self._runs(node)
        if kind in ("function_definition", "declaration") and self.whole_lines(node):
            key = _item_key(node)
            if key is not None:
                self.items[key] = None if key in self.items else node


def _update(node: tree_sitter.Node) -> bool:
    """``x++;`` or ``x op= e;`` inside a ``for`` loop (where ``#pragma omp atomic`` fits)."""
    if node.named_child_count != 1:
        return False
    expr = node.named_children[0]
    if expr.type == "assignment_expression":
        op = expr.child_by_field_name("operator")
        if op is None or op.type not in ("+=", "-=", "*=", "|=", "&=", "^="):
            return False
    elif expr.type != "update_expression":
        return False
    parent = node.parent
    while parent is not None and parent.type != "function_definition":
        if parent.type == "for_statement":
            return True
        parent = parent.parent
    return False


def _statement(node: tree_sitter.Node) -> bool:
    return not node.type.startswith("preproc") and node.type not in ("{", "}")


def _pure(node: tree_sitter.Node) -> bool:
    """Whether swapping the operands of ``node`` cannot reorder side effects."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("assignment_expression", "update_expression", "call_expression"):
            return False
        stack.extend(n.children)
    return True


def _declared_name(node: tree_sitter.Node) -> str | None:
    """The name a function definition or a one-variable declaration introduces."""
    declarators = [node.child_by_field_name("declarator")]
    if node.type == "declaration" and len(node.children_by_field_name("declarator")) != 1:
        return None
    target = declarators[0]
    while target is not None and target.type not in ("identifier", "field_identifier"):
        if target.type in ("qualified_identifier", "destructor_name", "operator_name"):
            return text_of(target).decode()
        target = target.child_by_field_name("declarator")
    return text_of(target).decode() if target is not None else None


def _item_key(node: tree_sitter.Node) -> tuple[str, ...] | None:
    """Names of the enclosing functions and the item itself: its identity across programs."""
    if node.parent is None or node.parent.type not in _STATEMENT_RUNS:
        return None
    own = _declared_name(node)
    if own is None:
        return None
    path = [own if node.type == "function_definition" else own + "="]
    above: tree_sitter.Node | None = node.parent
    while above is not None:
        if above.type == "function_definition":
            path.append(_declared_name(above) or "?")
        above = above.parent
    return tuple(reversed(path))
