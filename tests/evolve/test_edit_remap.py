"""REPLACE texts mapped the way their SEARCH texts were found: the edit its author meant.

The property: a change written sloppily, in any of the ways real models write edits (the sloppy
model server's kinds, a uniform shift, an indentation off by one space, CRLF), gives exactly
the program the same change written cleanly gives. Then examples: the issue's case, unchanged
lines kept byte for byte, moved lines, and the second mapping tried when the first one's child
does not parse.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from evoforge.evolve.checks import _syntax
from evoforge.evolve.edits import EditError, apply_edit
from evoforge.evolve.edits._remap import remap
from evoforge.problems import END_MARKER, START_MARKER
from tests.evolve.sloppy_server import KINDS, Hunk, diff_hunks, render, write_sloppily

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """\
import math


# EVOLVE-BLOCK-START
def step(x, n):
    total = 0  # running sum
    for i in range(n):
        if i % 2:
            total += x * i
        else:
            total -= 1
    return total
# EVOLVE-BLOCK-END
"""


def block(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def python_check(source: str) -> str | None:
    return _syntax.check_program_syntax(source, "python")


# --- the property --------------------------------------------------------------------------

SOURCES = {
    "example": PROGRAM,
    "circle_packing": (ROOT / "problems/builtin/circle_packing/seed.py").read_text(),
    "openevolve": (ROOT / "bench/openevolve_example/initial_program.py").read_text(),
    "tabbed": PROGRAM.replace("    ", "\t"),
    "two_spaces": PROGRAM.replace("    ", "  "),
}

EXTRA_KINDS = ("shift", "indent_off", "crlf")
"""Kinds besides the server's: every line indented 4 more; a context line (kept in REPLACE)
indented one space more; the answer written with CRLF line endings."""


def _editable(source: str) -> list[int]:
    """Indices of the lines strictly between the markers."""
    lines = source.split("\n")
    start = next(i for i, line in enumerate(lines) if START_MARKER in line)
    end = next(i for i, line in enumerate(lines) if END_MARKER in line)
    return list(range(start + 1, end))


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _opens(line: str) -> bool:
    return line.split("  #", 1)[0].rstrip().endswith((":", "(", "[", "{"))


@st.composite
def changes(draw: st.DrawFn) -> tuple[str, str]:
    """A parent and a child with a few lines changed, inserted or deleted, as a model changes
    code: new lines at the level of the line above, or one deeper after a line opening a body."""
    name = draw(st.sampled_from(sorted(SOURCES)))
    lines = SOURCES[name].split("\n")
    editable = [i for i in _editable(SOURCES[name]) if lines[i].strip()]
    unit = "\t" if name == "tabbed" else "  " if name == "two_spaces" else "    "
    at = draw(st.sampled_from(editable))
    out = list(lines)
    # a line deleted next to one inserted reads, with indentation dropped, as a line replaced:
    # a guess that the property cannot hold to, so an answer deletes or inserts, not both
    ops = draw(st.sampled_from([["edit", "insert"], ["edit", "delete"]]))
    for n, how in enumerate(draw(st.lists(st.sampled_from(ops), min_size=1, max_size=3))):
        i = min(at + n, len(out) - 1)
        line = out[i]
        if not line.strip() or START_MARKER in line or END_MARKER in line:
            continue
        if how == "edit":
            out[i] = line + f"  # edited {n}"
        elif how == "insert":
            deeper = unit if _opens(line) else ""
            out.insert(i + 1, f"{_indent(line)}{deeper}new_{n} = {n}")
        elif not _opens(line) and not _opens(out[i - 1]):
            del out[i]
    return SOURCES[name], "\n".join(out)


def _written(
    hunks: list[Hunk], kind: str, rng: np.random.Generator, change: tuple[str, str]
) -> str:
    if kind in KINDS:
        return write_sloppily(hunks, [kind], rng, parent=change[0], child=change[1])
    if kind == "crlf":
        return render(hunks).replace("\n", "\r\n")
    if kind == "shift":
        return render(
            [
                Hunk(
                    tuple("    " + s if s.strip() else s for s in h.search),
                    tuple("    " + r if r.strip() else r for r in h.replace),
                    h.context,
                )
                for h in hunks
            ]
        )
    # indent_off: the first context line one space deeper, in SEARCH and in REPLACE alike
    hunk = hunks[0]
    if not hunk.context:
        return render(hunks)
    i = hunk.context[0]
    line = hunk.search[i]
    off = " " + line
    j = hunk.replace.index(line)
    changed = Hunk(
        hunk.search[:i] + (off,) + hunk.search[i + 1 :],
        hunk.replace[:j] + (off,) + hunk.replace[j + 1 :],
        hunk.context,
    )
    return render([changed, *hunks[1:]])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    change=changes(),
    kind=st.sampled_from(KINDS + EXTRA_KINDS),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_sloppy_edit_gives_the_program_the_clean_one_gives(
    change: tuple[str, str], kind: str, seed: int
) -> None:
    parent, child = change
    # the server halves 4-space levels: a 2-space program's levels 1 and 2 would look alike
    assume(not (kind == "indent_2" and parent == SOURCES["two_spaces"]))
    hunks = diff_hunks(parent, child)
    assume(hunks)
    assert hunks is not None
    assume(all(any(line.strip() for line in hunk.search) for hunk in hunks))
    try:
        clean = apply_edit(parent, render(hunks)).source
    except EditError:
        assume(False)
    assume(clean == child)
    answer = _written(hunks, kind, np.random.default_rng(seed), change)
    try:
        sloppy = apply_edit(parent, answer)
    except EditError as exc:
        # a misremembered context line is found by similarity, which a short block may not reach
        assert kind == "context_off", f"{kind}: {exc}"
        return
    assert sloppy.source == child, kind


# --- examples ------------------------------------------------------------------------------


def test_the_issues_case_a_context_line_off_by_one_space_kept_in_replace() -> None:
    """The ```diff fence holds a block whose context line is indented one space too deep, and
    the REPLACE text repeats it: fuzzy matching finds the place, and the line goes in as the
    program has it (before, as written: 'unindent does not match any outer indentation')."""
    answer = (
        "```diff\n"
        + block(
            "     for i in range(n):\n        if i % 2:\n            total += x * i\n",
            "     for i in range(n):\n        if i % 3:\n            total += x * i\n",
        )
        + "```\n"
    )
    edit = apply_edit(PROGRAM, answer)
    assert edit.match == "fuzzy"
    assert edit.source == PROGRAM.replace("if i % 2:", "if i % 3:")
    assert _syntax.check_syntax(edit.source) is None


def test_a_new_line_after_the_off_by_one_line_keeps_the_programs_levels() -> None:
    answer = block(
        "     total = 0  # running sum\n    for i in range(n):\n",
        "     total = 0  # running sum\n    seen = 0\n    for i in range(n):\n",
    )
    edit = apply_edit(PROGRAM, answer)
    assert "    total = 0  # running sum\n    seen = 0\n    for i in range(n):\n" in edit.source


def test_unchanged_lines_are_the_programs_bytes() -> None:
    """Trailing whitespace and a tab the model did not copy stay as the program has them."""
    parent = PROGRAM.replace("    total = 0  # running sum\n", "    total = 0  # running sum \t\n")
    parent = parent.replace("    return total\n", "\treturn total\n")
    answer = block(
        "    total = 0  # running sum\n    for i in range(n):\n",
        "    total = 0  # running sum\n    for i in range(n + 1):\n",
    ) + block("    return total\n", "    return total\n    # done\n")
    source = apply_edit(parent, answer).source
    assert "    total = 0  # running sum \t\n    for i in range(n + 1):\n" in source
    assert "\treturn total\n" in source


def test_an_author_indenting_as_the_program_does_keeps_new_lines_as_written() -> None:
    """Only trailing whitespace differed: a new line inside a string, or aligned with a
    bracket, keeps its indentation (no rounding to the program's levels)."""
    answer = block(
        "    total = 0  # running sum \n",
        '    total = 0  # running sum\n    note = """\n     five\n"""\n'
        "    t = f(1,\n          2)\n",
    )
    edit = apply_edit(PROGRAM, answer)
    assert edit.match == "whitespace"
    assert '    note = """\n     five\n"""\n    t = f(1,\n          2)\n    for' in edit.source


def test_two_space_author_gets_the_programs_four_space_levels() -> None:
    answer = block(
        "  for i in range(n):\n    if i % 2:\n      total += x * i\n",
        "  for i in range(n):\n    if i % 2:\n      if x:\n        total += x * i\n",
    )
    edit = apply_edit(PROGRAM, answer)
    assert edit.match == "fuzzy"  # located as before: only the REPLACE mapping is new
    assert (
        "        if i % 2:\n            if x:\n                total += x * i\n        else:"
        in edit.source
    )


def test_a_line_the_author_moved_deeper_moves_in_the_programs_unit() -> None:
    """Tabs for spaces: an existing line moved under a new ``if`` goes one program level in."""
    answer = block(
        "\tfor i in range(n):\n\t\tif i % 2:\n",
        "\tfor i in range(n):\n\t\tif x:\n\t\t\tif i % 2:\n",
    )
    edit = apply_edit(PROGRAM, answer)
    assert edit.match == "whitespace"
    assert "    for i in range(n):\n        if x:\n            if i % 2:\n" in edit.source


def test_lost_indentation_except_continues_the_try_above_the_search_text() -> None:
    parent = MATCH.replace("    match a:\n        case 1:\n", "    try:\n        if a:\n").replace(
        "        case _:\n", "    except ValueError:\n"
    )
    answer = block(
        "x = 1\nexcept ValueError:\n", "x = 1\nexcept KeyError:\nx = 2\nexcept ValueError:\n"
    )
    edit = apply_edit(parent, answer)
    assert "            x = 1\n    except KeyError:\n        x = 2\n    except ValueError:\n" in (
        edit.source
    )


def test_a_crlf_program_gets_crlf_new_lines() -> None:
    parent = PROGRAM.replace("\n", "\r\n")
    edit = apply_edit(parent, block("total = 0  # running sum\n", "total = 1\nseen = 0\n"))
    assert edit.match == "reindent"
    assert "\r\n    total = 1\r\n    seen = 0\r\n    for" in edit.source


def test_remap_offers_no_alternative_when_the_author_was_understood() -> None:
    mapped = remap(["  a:", "    b"], ["    a:", "        b"], ["  a:", "    c", "  d"], [])
    assert mapped.text == "    a:\n        c\n    d\n" and mapped.alternative is None


# --- the second mapping --------------------------------------------------------------------

MATCH = """\
# EVOLVE-BLOCK-START
def f(a):
    match a:
        case 1:
            x = 1
        case _:
            x = 0
    return x
# EVOLVE-BLOCK-END
"""

# indentation dropped: the new ``case`` closes the body above it, which the first guess (the
# level of the line above) does not see: its child does not parse; the other reading (the
# level of the paired line below) does
LOST = block("x = 1\ncase _:\n", "x = 1\ncase 2:\nx = 2\ncase _:\n")
MEANT = MATCH.replace("        case _:", "        case 2:\n            x = 2\n        case _:")


def test_a_child_that_does_not_parse_is_tried_with_the_other_mapping() -> None:
    first = apply_edit(MATCH, LOST)
    assert python_check(first.source) is not None and first.problem is None
    edit = apply_edit(MATCH, LOST, check=python_check)
    assert edit.source == MEANT and edit.problem is None
    assert edit.match == first.match == "reindent"


def test_when_both_mappings_fail_the_first_is_kept_with_its_problem() -> None:
    calls: list[str] = []

    def refuse(source: str) -> str:
        calls.append(source)
        return f"problem {len(calls)}"

    edit = apply_edit(MATCH, LOST, check=refuse)
    assert len(calls) == 2 and calls[1] == MEANT
    assert edit.source == calls[0] != MEANT and edit.problem == "problem 1"


def test_an_understood_edit_is_checked_once() -> None:
    calls: list[str] = []

    def refuse(source: str) -> str:
        calls.append(source)
        return "no"

    edit = apply_edit(
        PROGRAM, block("    total = 0  # running sum\n", "    total = 1\n"), check=refuse
    )
    assert len(calls) == 1 and edit.problem == "no"


@pytest.mark.parametrize(
    "answer", [f"```python\n{PROGRAM}```\n", block("\ttotal = 0  # running sum\n", "\ttotal = 1\n")]
)
def test_the_check_result_is_recorded(answer: str) -> None:
    answer = answer.replace("total = 0", "total = 2", 1) if answer.startswith("```") else answer
    edit = apply_edit(PROGRAM, answer, check=python_check)
    assert edit.problem is None
