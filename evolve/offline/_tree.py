"""The offline mutation model's view of a program: its tree-sitter parse and mutation sites."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evoforge.evolve.checks import parser
from evoforge.problems import find_blocks

if TYPE_CHECKING:
    import tree_sitter

SWAPS = {
    "+": "-",
    "-": "+",
    "*": "/",
    "/": "*",
    "and": "or",
    "or": "and",
    "&&": "||",  # C and C++
    "||": "&&",
    "+=": "-=",
    "-=": "+=",
    "*=": "/=",
    "/=": "*=",
}
COMPARISONS = {
    "<": ("<=", ">"),
    "<=": ("<", ">="),
    ">": (">=", "<"),
    ">=": (">", "<="),
    "==": ("!=",),
    "!=": ("==",),
}
_ITEMS = frozenset(
    {"function_definition", "class_definition", "decorated_definition", "expression_statement"}
)


@dataclass(frozen=True)
class Change:
    start: int  # byte offsets in the parent
    end: int
    new: bytes


@dataclass(frozen=True)
class Mutation:
    changes: tuple[Change, ...]
    note: str


class Program:
    """A parsed program: bytes, tree, line starts, editable regions in bytes, and its sites.

    This class reads Python; :class:`evoforge.evolve.offline._clike.CProgram` reads C and C++
    with the same geometry and site lists, so every operator works on either.
    """

    language = "python"
    comment = b"#"  # what may follow a statement on its line
    number_types: frozenset[str] = frozenset({"integer", "float"})

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass")
        self.regions = [
            (_nbytes(text[: b.start]), _nbytes(text[: b.end])) for b in find_blocks(text)
        ]
        self.tree = self._parse()
        self.line_starts = [0]
        pos = self.data.find(b"\n")
        while pos >= 0:
            self.line_starts.append(pos + 1)
            pos = self.data.find(b"\n", pos + 1)
        self.numbers: list[tuple[tree_sitter.Node, float]] = []  # (node, weight)
        self.operators: list[tree_sitter.Node] = []  # tokens to swap (or min/max names)
        self.comparisons: list[tree_sitter.Node] = []
        self.blocks: list[list[tree_sitter.Node]] = []  # whole-line statements per suite
        self.items: dict[tuple[str, ...], tree_sitter.Node | None] = {}  # None: ambiguous
        self._collect()

    def _parse(self) -> tree_sitter.Tree:
        return parser().parse(self.data)

    def literal(self, node: tree_sitter.Node) -> tuple[str, str, str] | None:
        """``(kind, number, suffix)`` of a number node to perturb (kind ``integer`` or ``float``).

        None for a literal the operators leave alone (hex, underscores, imaginary...).
        """
        if _literal_value(node) is None:
            return None
        return node.type, text_of(node).decode(), ""

    def min_int(self, node: tree_sitter.Node, value: int) -> int:
        """The smallest integer ``node`` may become (a ``range()`` bound stays positive)."""
        return 1 if value >= 1 and in_range_call(node) else 0

    # -- geometry --

    def row(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset) - 1

    def line_start(self, row: int) -> int:
        return self.line_starts[row] if row < len(self.line_starts) else len(self.data)

    def region_rows(self, offset: int) -> tuple[int, int] | None:
        """First and last content rows of the region holding ``offset``."""
        for start, end in self.regions:
            if start <= offset < end:
                return self.row(start), self.row(end) - 1
        return None

    def whole_lines(self, node: tree_sitter.Node) -> bool:
        """Whether ``node`` alone fills its lines (a trailing comment is allowed)."""
        before = self.data[self.line_start(node.start_point.row) : node.start_byte]
        after = self.data[node.end_byte : self.line_start(node.end_point.row + 1)].strip()
        return not before.strip() and (not after or after.startswith(self.comment))

    def lines_of(self, node: tree_sitter.Node) -> tuple[int, int]:
        """Byte span of the whole lines holding ``node``, newline included."""
        return self.line_start(node.start_point.row), self.line_start(node.end_point.row + 1)

    def _inside(self, node: tree_sitter.Node) -> bool:
        return any(s <= node.start_byte and node.end_byte <= e for s, e in self.regions)

    def _overlaps(self, node: tree_sitter.Node) -> bool:
        return any(node.start_byte < e and node.end_byte > s for s, e in self.regions)

    # -- site collection --

    def _collect(self) -> None:
        stack = [self.tree.root_node]
        while stack:
            node = stack.pop()
            if node.is_error or node.is_missing or not self._overlaps(node):
                continue
            if self._inside(node):
                self._visit(node)
            stack.extend(reversed(node.children))

    def _visit(self, node: tree_sitter.Node) -> None:
        kind = node.type
        if kind in ("integer", "float"):
            if _literal_value(node) is not None:
                self.numbers.append((node, 0.05 if _index_like(node) else 1.0))
        elif kind in ("binary_operator", "boolean_operator", "augmented_assignment"):
            op = node.child_by_field_name("operator")
            if op is not None and op.type in SWAPS:
                self.operators.append(op)
        elif kind == "comparison_operator":
            self.comparisons += [c for c in node.children if c.type in COMPARISONS]
        elif kind == "call":
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "identifier" and fn.text in (b"min", b"max"):
                self.operators.append(fn)
        elif kind == "block":
            statements = [c for c in node.named_children if c.type != "comment"]
            if statements and all(self.whole_lines(s) for s in statements):
                self.blocks.append(statements)
        if kind in _ITEMS and node.parent is not None and node.parent.type in ("module", "block"):
            key = _item_key(node)
            if key is not None and self.whole_lines(node):
                self.items[key] = None if key in self.items else node


def text_of(node: tree_sitter.Node) -> bytes:
    """The node's source bytes. tree-sitter types ``Node.text`` as optional (a tree edited
    without its source has none); every tree here is parsed from the program's bytes."""
    text = node.text
    assert text is not None, "a node of a tree parsed from source has its text"
    return text


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _literal_value(node: tree_sitter.Node) -> float | None:
    """The value of a plain decimal literal (no hex, no underscores, not imaginary)."""
    text = text_of(node).decode("ascii", "replace")
    if node.type == "integer":
        return float(int(text)) if text.isdigit() else None
    if "_" in text or text[-1:] in "jJ":
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _index_like(node: tree_sitter.Node) -> bool:
    """0 or 1 used as an index, a slice bound or an axis: mostly left alone."""
    if node.type != "integer" or node.text not in (b"0", b"1"):
        return False
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "slice":
        return True
    if parent.type == "subscript":
        prev = node.prev_sibling
        return prev is not None and prev.type in ("[", ",")
    if parent.type == "keyword_argument":
        name = parent.child_by_field_name("name")
        return name is not None and name.text in (b"axis", b"dim")
    return False


def in_range_call(node: tree_sitter.Node) -> bool:
    args = node.parent
    call = args.parent if args is not None else None
    if args is None or call is None or args.type != "argument_list" or call.type != "call":
        return False
    fn = call.child_by_field_name("function")
    return fn is not None and fn.text == b"range"


def _name(node: tree_sitter.Node) -> str | None:
    if node.type == "decorated_definition":
        node = node.child_by_field_name("definition") or node
    if node.type in ("function_definition", "class_definition"):
        name = node.child_by_field_name("name")
        return text_of(name).decode() if name is not None else None
    if node.type == "expression_statement" and node.named_child_count == 1:
        assignment = node.named_children[0]
        if assignment.type == "assignment":
            left = assignment.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                return text_of(left).decode() + "="
    return None


def _item_key(node: tree_sitter.Node) -> tuple[str, ...] | None:
    """Names of the enclosing definitions and the item itself: its identity across programs."""
    own = _name(node)
    if own is None:
        return None
    path = [own]
    parent = node.parent
    while parent is not None:
        if parent.type in ("function_definition", "class_definition"):
            path.append(_name(parent) or "?")
        parent = parent.parent
    return tuple(reversed(path))
