"""Which functions ``mca:<cpu>`` analyses when a spec names no ``hot_functions``.

llvm-mca estimates the straight-line code of one function at a time, so something must say
which. A spec may name them (``hot_functions``); without that, the functions the candidate
may change are the natural choice: those defined in its EVOLVE-BLOCK regions
(:func:`block_functions`, found with tree-sitter-c/-cpp in the engine, where the source is
known). At ``-O2`` clang inlines a small ``static`` one into its only caller, leaving no body
of that name in the assembly, and what is analysed then would change from one candidate to the
next (``main`` with its input loop for one, a library template for another): no figure to
compare. So the assembly llvm-mca reads is compiled from :func:`keep_out_of_line`'s copy of the
source, each of those functions marked ``noinline`` (the binary that runs the tests is compiled
from the source as it is): every candidate's estimate is of the same functions, alone. Where
that copy does not compile (a ``friend`` definition, a pre-C++11 dialect), the source as it is
is analysed and :func:`choose_functions` falls back to the other functions it finds and, when
only ``main`` is left, to ``main``, which then holds the evolved code. Every choice comes with
a note that says which functions were analysed and why, so a result never hides what its
estimate measured.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from evoforge.problems import BlockError, find_blocks

if TYPE_CHECKING:
    import tree_sitter

LIBRARY_PREFIXES = ("std::", "__gnu_cxx", "_GLOBAL__", "__cxx_global")
"""Demangled names of code the C++ library instantiates or the compiler generates."""


@functools.cache
def _parser(language: str) -> tree_sitter.Parser:
    """The process-wide tree-sitter parser for ``c`` or ``cpp`` (made on first use)."""
    import tree_sitter
    import tree_sitter_c
    import tree_sitter_cpp

    grammar = tree_sitter_c.language() if language == "c" else tree_sitter_cpp.language()
    return tree_sitter.Parser(tree_sitter.Language(grammar))


def block_functions(source: str, language: str) -> tuple[str, ...]:
    """The names of the functions whose definitions lie in ``source``'s EVOLVE-BLOCKs, in
    order (unqualified: ``Solver::run`` gives ``run``). Empty for Rust, for a source without
    blocks, and for one tree-sitter cannot read a function from (the caller falls back)."""
    return tuple(dict.fromkeys(name for _, name in block_definitions(source, language) if name))


NOINLINE = {"c": "__attribute__((noinline)) ", "cpp": "[[gnu::noinline]] "}
"""What marks a definition ``noinline``, by language. C++ takes the standard spelling: it may
precede a ``[[nodiscard]]`` or ``__attribute__`` the definition already has (GNU's may not)."""


def keep_out_of_line(source: str, language: str) -> str:
    """``source`` with each function defined in its EVOLVE-BLOCKs marked ``noinline``, for
    the assembly llvm-mca estimates; "" when there is none (nothing to keep)."""
    definitions = block_definitions(source, language)
    if not definitions:
        return ""
    data = source.encode("utf-8")
    mark = NOINLINE[language].encode()
    parts, last = [], 0
    for start, _ in definitions:
        parts += [data[last:start], mark]
        last = start
    parts.append(data[last:])
    return b"".join(parts).decode("utf-8")


def block_definitions(source: str, language: str) -> list[tuple[int, str]]:
    """``(byte offset, name)`` of each function definition in ``source``'s EVOLVE-BLOCKs, in
    order (the offset of its first token after any ``template <...>``; the name "" where none
    is found). Empty for Rust and for a source without blocks."""
    if language not in ("c", "cpp"):
        return []
    try:
        blocks = find_blocks(source)
    except BlockError:
        return []
    data = source.encode("utf-8")
    # find_blocks counts characters, tree-sitter bytes: compare both in bytes
    spans = [
        (len(source[: b.start].encode("utf-8")), len(source[: b.end].encode("utf-8")))
        for b in blocks
    ]
    tree = _parser(language).parse(data)
    found: list[tuple[int, str]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            if any(start <= node.start_byte and node.end_byte <= end for start, end in spans):
                found.append((node.start_byte, _declared_name(node)))
            continue  # no function is defined inside another in C or C++
        stack.extend(reversed(node.children))
    return found


def _declared_name(node: tree_sitter.Node) -> str:
    """The unqualified name a ``function_definition`` declares ("" when none is found)."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")  # pointer, reference
    if declarator is None:
        return ""
    name = declarator.child_by_field_name("declarator")
    if name is None or name.text is None:
        return ""
    return name.text.decode("utf-8", "replace").rsplit("::", 1)[-1].strip()


def choose_functions(
    demangled: Mapping[str, str],
    hot: Sequence[str],
    evolved: Sequence[str],
    *,
    out_of_line: bool = False,
) -> tuple[list[str], str]:
    """The assembly symbols to analyse and a note saying which and why.

    Args:
        demangled: each function symbol with a body in the assembly -> its demangled name.
        hot: the spec's ``hot_functions``: when given, exactly these (by plain or symbol
            name); the caller reports none found as an error.
        evolved: the functions defined in the EVOLVE-BLOCKs (:func:`block_functions`).
        out_of_line: the assembly was compiled from :func:`keep_out_of_line`'s copy (the
            note says so).

    Without ``hot``: the evolved functions found in the assembly; if the compiler inlined
    them all, every function of the program's own (not ``main``, not the library's); if
    ``main`` is all that is left, ``main``.
    """

    def short(symbol: str) -> str:
        return qualified_name(demangled[symbol])

    def unqualified(symbol: str) -> str:
        return short(symbol).rsplit("::", 1)[-1].split("<", 1)[0]

    if hot:
        chosen = [s for s in demangled if short(s) in hot or s in hot]
        return chosen, f"hot_functions: {', '.join(short(s) for s in chosen)}"
    own = [s for s in demangled if not short(s).startswith(LIBRARY_PREFIXES)]
    found = [s for s in own if unqualified(s) in evolved and unqualified(s) != "main"]
    if found:
        alone = " (kept out of line for the estimate, each measured alone)" if out_of_line else ""
        return found, (
            f"the functions defined in the EVOLVE-BLOCK: {', '.join(short(s) for s in found)}"
            + alone
        )
    gone = f"{', '.join(evolved)} inlined at these flags" if evolved else "no function in it"
    others = [s for s in own if short(s) != "main"]
    if others:
        return others, (
            f"{', '.join(short(s) for s in others)} (of the EVOLVE-BLOCK's functions, {gone}; "
            "hot_functions = [...] chooses)"
        )
    mains = [s for s in own if short(s) == "main"]
    return mains, (
        f"main (of the EVOLVE-BLOCK's functions, {gone}, so main holds the evolved code; "
        "hot_functions = [...] chooses)"
    )


def qualified_name(demangled: str) -> str:
    """The qualified name in a demangled signature, without its parameters or the return
    type a function template's carries: ``void std::sort<int*>(int*, int*)`` gives
    ``std::sort<int*>``, ``median(std::vector<int>&)`` gives ``median``."""
    anonymous = "(anonymous namespace)"
    head = demangled.replace(anonymous, "\0").split("(", 1)[0]
    depth, start = 0, 0
    for index, char in enumerate(head):
        if char == "<":
            depth += 1
        elif char == ">":
            depth = max(0, depth - 1)
        elif char == " " and depth == 0:
            start = index + 1
    return head[start:].strip().replace("\0", anonymous)
