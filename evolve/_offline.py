"""The offline mutation model: a tree-sitter search over a program's EVOLVE-BLOCK regions.

:func:`mutate` answers exactly as an LLM would: one short line of prose, then one to three
SEARCH/REPLACE blocks that :func:`evolve._edits.apply_edit` applies without fuzz. It is a pure
function of its arguments (and the state of ``rng``), so runs are reproducible.

Operators and default weights (:data:`DEFAULT_WEIGHTS`): constant perturbation dominates,
because tuning constants is what improves parametric programs; operator and comparison swaps,
statement duplication, deletion and reordering explore structure; crossover copies a
definition, or the differing numbers of a structurally identical one, from an inspiration.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evolve._edits import is_format_line
from evolve._syntax import parser
from problems._blocks import BlockError, find_blocks

if TYPE_CHECKING:
    import tree_sitter

CURRENT_PROGRAM_HEADING = "## Current program"
"""A prompt line starting with this is followed by the program to change, fenced."""
INSPIRATION_HEADING = "## Inspiration"
"""Each prompt line starting with this is followed by one inspiration program, fenced."""

DEFAULT_WEIGHTS: Mapping[str, float] = {
    "constant": 0.58,
    "operator": 0.08,
    "comparison": 0.07,
    "duplicate": 0.03,
    "delete": 0.04,
    "reorder": 0.05,
    "crossover": 0.15,
}
"""Relative weight of each operator; operators with no site in a program are left out."""

NOTHING_TO_CHANGE = (
    "I found nothing I can change between the EVOLVE-BLOCK markers (no numbers, operators, "
    "comparisons or statements), so I propose no edit."
)

_BLOCK_COUNTS, _BLOCK_PROBS = (1, 2, 3), (0.6, 0.28, 0.12)
_ATTEMPTS_PER_BLOCK = 8
_SWAPS = {
    "+": "-",
    "-": "+",
    "*": "/",
    "/": "*",
    "and": "or",
    "or": "and",
    "+=": "-=",
    "-=": "+=",
    "*=": "/=",
    "/=": "*=",
}
_COMPARISONS = {
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
_NO_DELETE = frozenset(
    {
        "return_statement",
        "function_definition",
        "class_definition",
        "decorated_definition",
        "pass_statement",
    }
)


@dataclass(frozen=True)
class _Change:
    start: int  # byte offsets in the parent
    end: int
    new: bytes


@dataclass(frozen=True)
class _Mutation:
    changes: tuple[_Change, ...]
    note: str


class _Program:
    """A parsed program: bytes, tree, line starts, editable regions in bytes, and its sites."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass")
        self.regions = [
            (_nbytes(text[: b.start]), _nbytes(text[: b.end])) for b in find_blocks(text)
        ]
        self.tree = parser().parse(self.data)
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
        return not before.strip() and (not after or after.startswith(b"#"))

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
            if op is not None and op.type in _SWAPS:
                self.operators.append(op)
        elif kind == "comparison_operator":
            self.comparisons += [c for c in node.children if c.type in _COMPARISONS]
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


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _literal_value(node: tree_sitter.Node) -> float | None:
    """The value of a plain decimal literal (no hex, no underscores, not imaginary)."""
    text = node.text.decode("ascii", "replace")
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


def _in_range_call(node: tree_sitter.Node) -> bool:
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
        return name.text.decode() if name is not None else None
    if node.type == "expression_statement" and node.named_child_count == 1:
        assignment = node.named_children[0]
        if assignment.type == "assignment":
            left = assignment.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                return left.text.decode() + "="
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


# --- operators -------------------------------------------------------------------------------


def _perturb_int(value: int, at_least: int, rng: np.random.Generator) -> int:
    if value <= 10:
        new = value + int(rng.choice((-2, -1, 1, 2), p=(0.15, 0.35, 0.35, 0.15)))
    else:
        new = int(round(value * math.exp(rng.normal(0.0, 0.15))))
    new = max(at_least, new)
    if new == value:
        new = value + 1
    return new


def _format_float(value: float, original: str) -> str | None:
    mantissa = original.lower().split("e")[0].replace(".", "").lstrip("0")
    digits = max(3, min(12, len(mantissa) + 1))
    old = float(original)
    for d in range(digits, 18):
        if "e" in original.lower():  # keep the scientific style: 1e-4 -> 1.07e-04
            text = f"{value:.{d - 1}e}"
        else:
            text = f"{value:.{d}g}"
            if not any(c in text for c in ".e"):
                text += ".0"
        if float(text) != old:
            return text
    return None


def _perturb_float(value: float, rng: np.random.Generator) -> float:
    if value == 0.0:
        return float(10 ** rng.uniform(-3.0, -1.0))
    if rng.random() < 0.1:  # an occasional bigger, sign-preserving jump
        factor = math.exp(float(rng.choice((-1.0, 1.0))) * rng.uniform(math.log(2), math.log(10)))
    else:
        factor = math.exp(rng.normal(0.0, 0.1))
    return value * factor


def _constant(prog: _Program, rng: np.random.Generator) -> _Mutation | None:
    weights = np.array([w for _, w in prog.numbers])
    node = prog.numbers[int(rng.choice(len(weights), p=weights / weights.sum()))][0]
    text = node.text.decode()
    if node.type == "integer":
        value = int(text)
        new_text = str(_perturb_int(value, 1 if value >= 1 and _in_range_call(node) else 0, rng))
    else:
        new = _perturb_float(float(text), rng)
        new_text = _format_float(new, text) if math.isfinite(new) else None
        if new_text is None:
            return None
    return _Mutation(
        (_Change(node.start_byte, node.end_byte, new_text.encode()),),
        f"{text} -> {new_text} (line {node.start_point.row + 1})",
    )


def _swap(node: tree_sitter.Node, new: str) -> _Mutation:
    old = node.text.decode()
    return _Mutation(
        (_Change(node.start_byte, node.end_byte, new.encode()),),
        f"'{old}' -> '{new}' (line {node.start_point.row + 1})",
    )


def _operator(prog: _Program, rng: np.random.Generator) -> _Mutation | None:
    node = prog.operators[int(rng.integers(len(prog.operators)))]
    text = node.text.decode()
    new = {"min": "max", "max": "min"}.get(text) or _SWAPS[text]
    return _swap(node, new)


def _comparison(prog: _Program, rng: np.random.Generator) -> _Mutation | None:
    node = prog.comparisons[int(rng.integers(len(prog.comparisons)))]
    options = _COMPARISONS[node.type]
    return _swap(node, options[int(rng.integers(len(options)))])


def _pick_statement(prog: _Program, rng: np.random.Generator, ok) -> tuple[list, int] | None:
    choices = [(b, i) for b in prog.blocks for i, s in enumerate(b) if ok(b, i, s)]
    if not choices:
        return None
    return choices[int(rng.integers(len(choices)))]


def _duplicate(prog: _Program, rng: np.random.Generator) -> _Mutation | None:
    picked = _pick_statement(prog, rng, lambda b, i, s: s.type == "expression_statement")
    if picked is None:
        return None
    stmt = picked[0][picked[1]]
    start, end = prog.lines_of(stmt)
    lines = prog.data[start:end]
    return _Mutation(
        (_Change(start, end, lines + lines),), f"repeat line {stmt.start_point.row + 1}"
    )


def _delete(prog: _Program, rng: np.random.Generator) -> _Mutation | None:
    picked = _pick_statement(prog, rng, lambda b, i, s: s.type not in _NO_DELETE)
    if picked is None:
        return None
    block, i = picked
    stmt = block[i]
    start, end = prog.lines_of(stmt)
    replacement = b""
    if len(block) == 1:  # never leave an empty suite
        line = prog.data[start:end]
        replacement = line[: len(line) - len(line.lstrip())] + b"pass\n"
    return _Mutation((_Change(start, end, replacement),), f"drop line {stmt.start_point.row + 1}")


def _reorder(prog: _Program, rng: np.random.Generator) -> _Mutation | None:
    picked = _pick_statement(prog, rng, lambda b, i, s: i + 1 < len(b) and s.text != b[i + 1].text)
    if picked is None:
        return None
    block, i = picked
    first_start, first_end = prog.lines_of(block[i])
    second_start, second_end = prog.lines_of(block[i + 1])
    data = prog.data
    new = data[second_start:second_end] + data[first_end:second_start] + data[first_start:first_end]
    return _Mutation(
        (_Change(first_start, second_end, new),),
        f"swap lines {block[i].start_point.row + 1} and {block[i + 1].start_point.row + 1}",
    )


def _numbers_in(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    found, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.type in ("integer", "float"):
            found.append(n)
        else:
            stack.extend(reversed(n.children))
    return found


def _skeleton(data: bytes, node: tree_sitter.Node, numbers: list) -> bytes:
    parts, prev = [], node.start_byte
    for n in numbers:
        parts += [data[prev : n.start_byte], b"\0"]
        prev = n.end_byte
    parts.append(data[prev : node.end_byte])
    return b"".join(parts)


def _reindent(lines: bytes, old: bytes, new: bytes) -> bytes | None:
    if old == new:
        return lines
    out = []
    for line in lines.splitlines(keepends=True):
        if not line.strip():
            out.append(line)
        elif line.startswith(old):
            out.append(new + line[len(old) :])
        else:
            return None
    return b"".join(out)


def _crossover_candidates(prog: _Program, others: list[_Program]) -> list[_Mutation]:
    out: list[_Mutation] = []
    for number, other in enumerate(others, start=1):
        for key, mine in prog.items.items():
            theirs = other.items.get(key)
            if mine is None or theirs is None or mine.text == theirs.text:
                continue
            label = ".".join(key).rstrip("=")
            mine_nums, their_nums = _numbers_in(mine), _numbers_in(theirs)
            if len(mine_nums) == len(their_nums) and _skeleton(
                prog.data, mine, mine_nums
            ) == _skeleton(other.data, theirs, their_nums):
                changes = tuple(
                    _Change(a.start_byte, a.end_byte, b.text)
                    for a, b in zip(mine_nums, their_nums, strict=True)
                    if a.text != b.text
                )
                if changes:
                    out.append(
                        _Mutation(
                            changes, f"take the constants of {label} from inspiration {number}"
                        )
                    )
                continue
            start, end = prog.lines_of(mine)
            o_start, o_end = other.lines_of(theirs)
            indent = prog.data[start : mine.start_byte]
            their_indent = other.data[o_start : theirs.start_byte]
            new = _reindent(other.data[o_start:o_end], their_indent, indent)
            if new is not None and new != prog.data[start:end]:
                out.append(
                    _Mutation(
                        (_Change(start, end, new),), f"take {label} from inspiration {number}"
                    )
                )
    return out


# --- answer assembly -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Hunk:
    first: int  # rows of the SEARCH text, inclusive
    last: int
    search: str
    replace: str
    note: str


def _hunk(prog: _Program, mutation: _Mutation) -> _Hunk | None:
    """Whole-line SEARCH/REPLACE for a mutation, grown until its SEARCH text is unique."""
    start = min(c.start for c in mutation.changes)
    end = max(c.end for c in mutation.changes)
    rows = prog.region_rows(start)
    if rows is None or end <= start:
        return None
    lo, hi = rows
    first, last = prog.row(start), prog.row(end - 1)
    data = prog.data
    grow_down = True
    while True:
        a, b = prog.line_start(first), prog.line_start(last + 1)
        search = data[a:b]
        pos = data.find(search)
        if pos == a and data.find(search, pos + 1) < 0:
            break
        if grow_down and last < hi:
            last += 1
        elif first > lo:
            first -= 1
        elif last < hi:
            last += 1
        else:
            return None  # not unique even as the whole region
        grow_down = not grow_down
    pieces, prev = [], a
    for change in sorted(mutation.changes, key=lambda c: c.start):
        pieces += [data[prev : change.start], change.new]
        prev = change.end
    pieces.append(data[prev:b])
    replace = b"".join(pieces)
    if replace == search:
        return None
    search_text = search.decode("utf-8", "surrogatepass")
    replace_text = replace.decode("utf-8", "surrogatepass")
    if any(is_format_line(line) for line in (search_text + replace_text).split("\n")):
        return None  # a line the answer parser would take for a marker
    return _Hunk(first, last, search_text, replace_text, mutation.note)


def _render(hunks: list[_Hunk]) -> str:
    notes = "; ".join(h.note for h in hunks)
    lines = [f"Offline mutation: {notes}.", ""]
    for hunk in hunks:
        lines += ["<<<<<<< SEARCH", hunk.search + "=======", hunk.replace + ">>>>>>> REPLACE", ""]
    return "\n".join(lines)


def _applies_cleanly(text: str, hunks: list[_Hunk]) -> list[_Hunk]:
    """Keep the hunks whose SEARCH is unique in the evolving text when applied in order."""
    kept = []
    for hunk in hunks:
        pos = text.find(hunk.search)
        if pos < 0 or text.find(hunk.search, pos + 1) >= 0:
            continue
        text = text[:pos] + hunk.replace + text[pos + len(hunk.search) :]
        kept.append(hunk)
    return kept


_OPERATORS = {
    "constant": (lambda p: bool(p.numbers), _constant),
    "operator": (lambda p: bool(p.operators), _operator),
    "comparison": (lambda p: bool(p.comparisons), _comparison),
    "duplicate": (lambda p: bool(p.blocks), _duplicate),
    "delete": (lambda p: bool(p.blocks), _delete),
    "reorder": (lambda p: bool(p.blocks), _reorder),
}


def mutate(
    parent: str,
    inspirations: Sequence[str],
    rng: np.random.Generator,
    *,
    weights: Mapping[str, float] | None = None,
) -> str:
    """Propose a change to ``parent`` as an LLM answer with 1-3 SEARCH/REPLACE blocks.

    Args:
        parent: the program to change; only its EVOLVE-BLOCK regions are touched.
        inspirations: other programs of the same problem, for crossover.
        rng: the only source of randomness: the same inputs and state give the same answer.
        weights: relative operator weights, keyed like :data:`DEFAULT_WEIGHTS`; missing
            keys weigh 0.

    Returns:
        The answer text. When nothing can be changed it has no block and says why, so that
        applying it fails as an edit failure.
    """
    weights = DEFAULT_WEIGHTS if weights is None else weights
    try:
        prog = _Program(parent)
    except BlockError as exc:
        return f"I cannot propose an edit: {exc}."
    others = []
    for text in inspirations:
        try:
            others.append(_Program(text))
        except BlockError:
            continue  # an inspiration without regions offers nothing to copy
    crossovers = _crossover_candidates(prog, others) if others else []
    names = [n for n, (ok, _) in _OPERATORS.items() if ok(prog) and weights.get(n, 0) > 0]
    if crossovers and weights.get("crossover", 0) > 0:
        names.append("crossover")
    if not names:
        return NOTHING_TO_CHANGE
    p = np.array([weights[n] for n in names], dtype=float)
    p /= p.sum()
    wanted = int(rng.choice(_BLOCK_COUNTS, p=_BLOCK_PROBS))
    hunks: list[_Hunk] = []
    for _ in range(wanted * _ATTEMPTS_PER_BLOCK):
        if len(hunks) == wanted:
            break
        name = names[int(rng.choice(len(names), p=p))]
        if name == "crossover":
            mutation = crossovers[int(rng.integers(len(crossovers)))]
        else:
            mutation = _OPERATORS[name][1](prog, rng)
        hunk = _hunk(prog, mutation) if mutation is not None else None
        if hunk is None or any(hunk.first <= h.last and h.first <= hunk.last for h in hunks):
            continue
        hunks.append(hunk)
    hunks = _applies_cleanly(parent, sorted(hunks, key=lambda h: h.first))
    if not hunks:
        return NOTHING_TO_CHANGE
    return _render(hunks)
