"""The offline mutation model: a tree-sitter search over a program's EVOLVE-BLOCK regions.

:func:`mutate` answers exactly as an LLM would: one short line of prose, then one to three
SEARCH/REPLACE blocks that :func:`evoforge.evolve.edits.apply_edit` applies without fuzz. It is a
pure function of its arguments (and the state of ``rng``), so runs are reproducible.

Operators and default weights (:data:`DEFAULT_WEIGHTS`): constant perturbation dominates,
because tuning constants is what improves parametric programs (a kernel's block sizes, warp
and stage counts move by factors of two: :mod:`~evoforge.evolve.offline._knobs`); operator and
comparison swaps, statement duplication, deletion and reordering explore structure; crossover
copies a definition, or the differing numbers of a structurally identical one, from an inspiration.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evoforge.evolve.edits import is_format_line
from evoforge.evolve.offline._clike import C_LANGUAGES, detect_language, program_for
from evoforge.evolve.offline._crewrites import (
    branchless,
    has_chains,
    has_ifs,
    has_loops,
    has_openmp_loops,
    has_openmp_updates,
    loop_bound,
    loop_pragma,
    omp_atomic,
    omp_parallel,
    swap_operands,
)
from evoforge.evolve.offline._crossover import crossover_candidates
from evoforge.evolve.offline._knobs import is_power_of_two, knob_name, step_knob
from evoforge.evolve.offline._tree import (
    COMPARISONS,
    SWAPS,
    Change,
    Mutation,
    Program,
    text_of,
)
from evoforge.problems import BlockError

if TYPE_CHECKING:
    import tree_sitter

DEFAULT_WEIGHTS: Mapping[str, float] = {
    "constant": 0.58,
    "operator": 0.08,
    "comparison": 0.07,
    "duplicate": 0.03,
    "delete": 0.04,
    "reorder": 0.05,
    "crossover": 0.15,
}
"""Relative weight of each operator on Python; operators with no site in a program are left out."""

C_WEIGHTS: Mapping[str, float] = {
    "constant": 0.2,
    "operator": 0.05,
    "comparison": 0.07,
    "duplicate": 0.02,
    "delete": 0.04,
    "reorder": 0.08,
    "crossover": 0.12,
    "branchless": 0.1,
    "swap_operands": 0.08,
    "loop_bound": 0.08,
    "loop_pragma": 0.16,
    "omp_parallel": 0.16,
    "omp_atomic": 0.08,
}
"""Default weights on C and C++: fewer constant tweaks (C constants are mostly loop starts and
sizes, where a change is almost always wrong), plus the C rewrites of
:mod:`evoforge.evolve.offline._crewrites`."""

NOTHING_TO_CHANGE = (
    "I found nothing I can change between the EVOLVE-BLOCK markers (no numbers, operators, "
    "comparisons or statements), so I propose no edit."
)

_BLOCK_COUNTS, _BLOCK_PROBS = (1, 2, 3), (0.6, 0.28, 0.12)
_ATTEMPTS_PER_BLOCK = 8
_NO_DELETE = frozenset(
    {
        "return_statement",
        "function_definition",
        "class_definition",
        "decorated_definition",
        "pass_statement",
        "declaration",  # C and C++: deleting one leaves its uses undeclared
    }
)


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


def _constant(prog: Program, rng: np.random.Generator) -> Mutation | None:
    weights = np.array([w for _, w in prog.numbers])
    node = prog.numbers[int(rng.choice(len(weights), p=weights / weights.sum()))][0]
    literal = prog.literal(node)
    if literal is None:
        return None
    kind, number, suffix = literal
    text = text_of(node).decode()
    new_text: str | None
    if kind == "integer":
        value = int(number)
        if is_power_of_two(value) and knob_name(node):  # a block size, a warp count
            new_text = str(step_knob(value, rng)) + suffix
        else:
            new_text = str(_perturb_int(value, prog.min_int(node, value), rng)) + suffix
    else:
        new = _perturb_float(float(number), rng)
        new_text = _format_float(new, number) if math.isfinite(new) else None
        if new_text is None:
            return None
        new_text += suffix
    return Mutation(
        (Change(node.start_byte, node.end_byte, new_text.encode()),),
        f"{text} -> {new_text} (line {node.start_point.row + 1})",
    )


def _swap(node: tree_sitter.Node, new: str) -> Mutation:
    old = text_of(node).decode()
    return Mutation(
        (Change(node.start_byte, node.end_byte, new.encode()),),
        f"'{old}' -> '{new}' (line {node.start_point.row + 1})",
    )


def _operator(prog: Program, rng: np.random.Generator) -> Mutation | None:
    node = prog.operators[int(rng.integers(len(prog.operators)))]
    text = text_of(node).decode()
    new = {"min": "max", "max": "min"}.get(text) or SWAPS[text]
    return _swap(node, new)


def _comparison(prog: Program, rng: np.random.Generator) -> Mutation | None:
    node = prog.comparisons[int(rng.integers(len(prog.comparisons)))]
    options = COMPARISONS[node.type]
    return _swap(node, options[int(rng.integers(len(options)))])


def _pick_statement(prog: Program, rng: np.random.Generator, ok) -> tuple[list, int] | None:
    choices = [(b, i) for b in prog.blocks for i, s in enumerate(b) if ok(b, i, s)]
    if not choices:
        return None
    return choices[int(rng.integers(len(choices)))]


def _duplicate(prog: Program, rng: np.random.Generator) -> Mutation | None:
    picked = _pick_statement(prog, rng, lambda b, i, s: s.type == "expression_statement")
    if picked is None:
        return None
    stmt = picked[0][picked[1]]
    start, end = prog.lines_of(stmt)
    lines = prog.data[start:end]
    return Mutation((Change(start, end, lines + lines),), f"repeat line {stmt.start_point.row + 1}")


def _delete(prog: Program, rng: np.random.Generator) -> Mutation | None:
    picked = _pick_statement(prog, rng, lambda b, i, s: s.type not in _NO_DELETE)
    if picked is None:
        return None
    block, i = picked
    stmt = block[i]
    start, end = prog.lines_of(stmt)
    replacement = b""
    if len(block) == 1 and prog.language == "python":  # never leave an empty suite
        line = prog.data[start:end]
        replacement = line[: len(line) - len(line.lstrip())] + b"pass\n"
    return Mutation((Change(start, end, replacement),), f"drop line {stmt.start_point.row + 1}")


def _reorder(prog: Program, rng: np.random.Generator) -> Mutation | None:
    picked = _pick_statement(
        prog,
        rng,
        lambda b, i, s: i + 1 < len(b) and s.text != b[i + 1].text and s.type != "declaration",
    )
    if picked is None:
        return None
    block, i = picked
    first_start, first_end = prog.lines_of(block[i])
    second_start, second_end = prog.lines_of(block[i + 1])
    data = prog.data
    new = data[second_start:second_end] + data[first_end:second_start] + data[first_start:first_end]
    return Mutation(
        (Change(first_start, second_end, new),),
        f"swap lines {block[i].start_point.row + 1} and {block[i + 1].start_point.row + 1}",
    )


# --- answer assembly -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Hunk:
    first: int  # rows of the SEARCH text, inclusive
    last: int
    search: str
    replace: str
    note: str


def _hunk(prog: Program, mutation: Mutation) -> _Hunk | None:
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
    "branchless": (has_ifs, branchless),
    "swap_operands": (has_chains, swap_operands),
    "loop_bound": (has_loops, loop_bound),
    "loop_pragma": (has_loops, loop_pragma),
    "omp_parallel": (has_openmp_loops, omp_parallel),
    "omp_atomic": (has_openmp_updates, omp_atomic),
}


def mutate(
    parent: str,
    inspirations: Sequence[str],
    rng: np.random.Generator,
    *,
    weights: Mapping[str, float] | None = None,
    language: str | None = None,
) -> str:
    """Propose a change to ``parent`` as an LLM answer with 1-3 SEARCH/REPLACE blocks.

    Args:
        parent: the program to change; only its EVOLVE-BLOCK regions are touched.
        inspirations: other programs of the same problem, for crossover.
        rng: the only source of randomness: the same inputs and state give the same answer.
        weights: relative operator weights, keyed like :data:`DEFAULT_WEIGHTS` (or
            :data:`C_WEIGHTS`); missing keys weigh 0. Default: the language's table.
        language: ``python``, ``c`` or ``cpp``; None reads it from the EVOLVE-BLOCK marker
            comments (``//`` or ``/*`` is C-like), as the prompt's fence tag is not reliable.

    Returns:
        The answer text. When nothing can be changed it has no block and says why, so that
        applying it fails as an edit failure.
    """
    language = detect_language(parent) if language is None else language
    if weights is None:
        weights = C_WEIGHTS if language in C_LANGUAGES else DEFAULT_WEIGHTS
    try:
        prog = program_for(parent, language)
    except BlockError as exc:
        return f"I cannot propose an edit: {exc}."
    others = []
    for text in inspirations:
        try:
            others.append(program_for(text, language))
        except BlockError:
            continue  # an inspiration without regions offers nothing to copy
    crossovers = crossover_candidates(prog, others) if others else []
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
        mutation: Mutation | None
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
