"""Rewrites that elide the code they leave alone ("# ... rest unchanged ..."): filled from the
parent, as the model meant, instead of losing that code."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, strategies as st

from evoforge.evolve.edits import EditError, apply_edit
from evoforge.evolve.edits._elided import fill_elisions, is_elision
from evoforge.problems import find_blocks
from tests.conftest import ROOT
from tests.evolve.test_edit_remap import block, python_check

SEED = (ROOT / "problems/builtin/circle_packing/seed.py").read_text()
OPENEVOLVE = (ROOT / "bench/openevolve_example/initial_program.py").read_text()


def region(program: str) -> tuple[str, str, str]:
    """The program before its region's content, the content, and what follows it."""
    (block,) = find_blocks(program)
    return program[: block.start], program[block.start : block.end], program[block.end :]


def same_code(a: str, b: str) -> bool:
    return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))


def rewrite(program: str) -> str:
    return f"Here is the improved program.\n\n```python\n{program}```\n"


HEAD, CONTENT, TAIL = region(SEED)
CENTERS = CONTENT[CONTENT.index("def construct_centers") : CONTENT.index("def compute_radii")]
RADII = CONTENT[CONTENT.index("def compute_radii") : CONTENT.index("def relax")]
NEW_CENTERS = CENTERS.replace("0.5", "0.45", 1)
MEANT = SEED.replace(CENTERS, NEW_CENTERS)
BEFORE = CONTENT[: CONTENT.index("def construct_centers")]
AFTER = CONTENT[CONTENT.index("def compute_radii") :]
ELIDED = {
    "comment": f"{BEFORE}{NEW_CENTERS}# ... (rest of the code unchanged) ...\n",
    "dots": f"{BEFORE}{NEW_CENTERS}...\n",
    "ellipsis character": f"{BEFORE}{NEW_CENTERS}# …\n",
    "words": f"{BEFORE}{NEW_CENTERS}# The other functions remain the same.\n",
    "before": f"# ... imports and constants as before ...\n\n\n{NEW_CENTERS}{AFTER}",
    "both sides": f"# ... unchanged ...\n\n\n{NEW_CENTERS}# ... unchanged ...\n",
    "stub": BEFORE + NEW_CENTERS + AFTER.replace(RADII, "def compute_radii(centers): ...\n\n\n"),
    "stub with docstring and pass": BEFORE
    + NEW_CENTERS
    + AFTER.replace(
        RADII,
        'def compute_radii(centers):\n    """Radii."""\n    pass  # omitted for brevity\n\n\n',
    ),
}


@pytest.mark.parametrize("how", sorted(ELIDED))
def test_an_elided_rewrite_is_the_program_it_means(how: str) -> None:
    applied = apply_edit(SEED, rewrite(HEAD + ELIDED[how] + TAIL), check=python_check)
    assert applied.problem is None
    assert same_code(applied.source, MEANT)


@pytest.mark.parametrize("how", ["comment", "before", "stub"])
def test_an_elided_rewrite_of_the_region_alone_is_filled_too(how: str) -> None:
    assert same_code(apply_edit(SEED, rewrite(ELIDED[how]), check=python_check).source, MEANT)


def test_what_the_model_wrote_is_kept_new_functions_included() -> None:
    helper = "def spread(centers):\n    return centers * 0.99\n\n\n"
    content = f"{BEFORE}{NEW_CENTERS}{helper}# ... unchanged ...\n"
    child = apply_edit(SEED, rewrite(HEAD + content + TAIL)).source
    assert same_code(child, MEANT.replace(NEW_CENTERS, NEW_CENTERS + helper))
    assert child.index("def spread") < child.index("def compute_radii")  # at the elision


def test_each_statement_goes_to_the_elision_after_its_neighbour() -> None:
    old = "A = 1\n\n\ndef f():\n    return A\n\n\ndef g():\n    return 2\n\n\n"
    old += "def h():\n    return 3\n"
    new = "# ...\n\n\ndef f():\n    return A + 1\n\n\n# ... g and h unchanged\n"
    filled = fill_elisions(old, new)
    assert same_code(filled, old.replace("return A\n", "return A + 1\n"))
    assert filled.index("A = 1") < filled.index("def f") < filled.index("def g")


def test_a_method_stub_is_filled_from_its_class() -> None:
    old = "class Packer:\n    def grow(self):\n        return 1\n\n    def shrink(self):\n"
    new = old.replace("return 1", "return 5") + "        ...\n"
    old += "        return 2\n"
    assert same_code(fill_elisions(old, new), old.replace("return 1", "return 5"))


@pytest.mark.parametrize(
    "old, new",
    [
        # no elision: a rewrite that drops a function is the name check's business
        ("def f():\n    return 1\n\n\ndef g():\n    return 2\n", "def f():\n    return 3\n"),
        # the parent's function is a stub too: nothing to fill it from
        ("def f():\n    ...\n", "def f():\n    ...  # unchanged\n"),
        # an elision whose code does not parse: returned as written, for the checks to report
        ("def f():\n    return 1\n", "def f(:\n    return 2\n# ... unchanged\n"),
        # an elision inside a body stands for lines, not for statements of the parent
        (
            "def f(x):\n    y = x\n    return y\n",
            "def f(x):\n    # ... setup unchanged\n    return y\n",
        ),
    ],
    ids=["no elision", "stub parent", "does not parse", "inside a body"],
)
def test_code_with_nothing_to_fill_is_returned_as_written(old: str, new: str) -> None:
    assert fill_elisions(old, new) == new


@pytest.mark.parametrize(
    "line, elided",
    [
        ("# ... rest of the code unchanged ...", True),
        ("    # (other helpers omitted for brevity)", True),
        ("...", True),
        ("    ...  # as before", True),
        ("    pass  # unchanged", True),
        ("# compute the radii", False),
        ("x = 1  # unchanged", False),
        ("    pass", False),
        ("    pass  # nothing to do", False),
    ],
)
def test_what_reads_as_an_elision(line: str, elided: bool) -> None:
    assert is_elision(line) is elided


ELISIONS = ["# ...", "# ... unchanged ...", "...", "# (rest omitted for brevity)", "# …"]


def _statements(content: str) -> list[str]:
    """The content's top-level statements as texts, each with the blank lines after it."""
    tree = ast.parse(content)
    lines = content.split("\n")
    starts = [min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))]) - 1
              for n in tree.body]  # fmt: skip
    ends = [*starts[1:], len(lines)]
    return ["\n".join(lines[a:b]) for a, b in zip(starts, ends, strict=True)]


@given(
    program=st.sampled_from([SEED, OPENEVOLVE]),
    data=st.data(),
)
def test_any_run_of_statements_elided_gives_the_parent_back(
    program: str, data: st.DataObject
) -> None:
    head, content, tail = region(program)
    statements = _statements(content)
    elided = data.draw(st.lists(st.booleans(), min_size=len(statements), max_size=len(statements)))
    if all(elided):
        elided[0] = False  # a rewrite of nothing but elisions changes nothing
    pieces, previous = [], False
    for text, gone in zip(statements, elided, strict=True):
        if gone and not previous:
            pieces.append(data.draw(st.sampled_from(ELISIONS)) + "\n\n")
        elif not gone:
            pieces.append(text if text.endswith("\n") else text + "\n")
        previous = gone
    answer = rewrite(head + "".join(pieces) + tail)
    try:
        child = apply_edit(program, answer, check=python_check)
    except EditError as exc:
        assert "changes nothing" in str(exc)  # the elided parts were all that changed: nothing
        return
    assert same_code(child.source, program)


def test_a_diff_whose_replace_elides_what_its_search_holds_keeps_it() -> None:
    answer = block(CENTERS + RADII, NEW_CENTERS + "# ... compute_radii unchanged ...\n\n\n")
    applied = apply_edit(SEED, answer, check=python_check)
    assert applied.kind == "diff" and applied.source == MEANT


def test_a_pair_of_whole_programs_the_second_elided_is_the_program_it_means() -> None:
    shown = HEAD + ELIDED["comment"] + TAIL
    answer = f"Original code:\n```python\n{SEED}```\n\nUpdated code:\n```python\n{shown}```\n"
    assert same_code(apply_edit(SEED, answer, check=python_check).source, MEANT)
