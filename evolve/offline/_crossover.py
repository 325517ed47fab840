"""Crossover for the offline mutation model: take a definition, or its numbers, from another."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.evolve.offline._tree import Change, Mutation, Program, text_of

if TYPE_CHECKING:
    import tree_sitter


def _numbers_in(node: tree_sitter.Node, types: frozenset[str]) -> list[tree_sitter.Node]:
    found, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.type in types:
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


def crossover_candidates(prog: Program, others: list[Program]) -> list[Mutation]:
    out: list[Mutation] = []
    for number, other in enumerate(others, start=1):
        for key, mine in prog.items.items():
            theirs = other.items.get(key)
            if mine is None or theirs is None or mine.text == theirs.text:
                continue
            label = ".".join(key).rstrip("=")
            mine_nums = _numbers_in(mine, prog.number_types)
            their_nums = _numbers_in(theirs, other.number_types)
            if len(mine_nums) == len(their_nums) and _skeleton(
                prog.data, mine, mine_nums
            ) == _skeleton(other.data, theirs, their_nums):
                changes = tuple(
                    Change(a.start_byte, a.end_byte, text_of(b))
                    for a, b in zip(mine_nums, their_nums, strict=True)
                    if a.text != b.text
                )
                if changes:
                    out.append(
                        Mutation(
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
                    Mutation((Change(start, end, new),), f"take {label} from inspiration {number}")
                )
    return out
