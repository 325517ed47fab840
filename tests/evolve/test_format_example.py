"""The answer format's worked example: a real line of the current program, one knob changed."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings, strategies as st

from evoforge.evolve.edits import apply_edit
from evoforge.evolve.prompts._example import format_example
from evoforge.problems import load_problem

ROOT = Path(__file__).resolve().parents[2]
CIRCLES = load_problem(ROOT / "problems" / "builtin" / "circle_packing").seed_source


def example_block(example: str) -> str:
    return example[example.index("<<<<<<< SEARCH") :] + "\n"


def test_the_same_program_always_shows_the_same_example() -> None:
    assert format_example(CIRCLES) == format_example(CIRCLES)


def test_different_parents_show_different_lines() -> None:
    parents = [CIRCLES.replace("RELAX_STEPS = 40", f"RELAX_STEPS = {n}") for n in range(40, 60)]
    assert len({format_example(p).split("\n\n", 1)[1] for p in parents}) >= 5


def test_a_block_without_constants_repeats_its_line_and_says_so() -> None:
    program = "# EVOLVE-BLOCK-START\ndef f(x):\n    return x[2]\n# EVOLVE-BLOCK-END\n"
    example = format_example(program)
    assert "its REPLACE repeats the SEARCH line" in example
    assert "x[3]" not in example  # an index is never the number changed


def test_a_program_without_a_block_gets_no_example() -> None:
    assert format_example("x = 1\n") == "" and format_example(None) == ""


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-100, 100, allow_nan=False).map(lambda v: round(v, 3)), min_size=1))
def test_the_example_applies_to_its_program_and_changes_it(values: list[float]) -> None:
    constants = "".join(f"K{i} = {v!r}  # knob\n" for i, v in enumerate(values))
    program = f"import math\n\n# EVOLVE-BLOCK-START\n{constants}# EVOLVE-BLOCK-END\n"
    example = format_example(program)
    if "it changes one number" in example:
        assert apply_edit(program, example_block(example)).source != program
    else:  # a constant whose change prints the same (0.0 * 1.1)
        assert "repeats the SEARCH line" in example
