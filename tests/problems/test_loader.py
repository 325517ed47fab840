"""The problem spec DSL: valid specs load; malformed ones fail with file, field and fix."""

from __future__ import annotations

import pytest

from problems import Direction, ProblemSpecError, load_problem
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC


def test_valid_spec_loads(make_problem):
    problem = load_problem(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED))
    assert problem.name == "tiny"
    assert problem.primary.direction is Direction.MAXIMIZE
    assert problem.num_cells == 4
    assert problem.cell_of({"a": 9.99}) == 3 and problem.cell_of({"a": 50.0}) == 3
    assert problem.cell_of({"a": -10.0}) == 0
    assert "EVOLVE-BLOCK-START" in problem.seed_source


def test_single_file_spec_with_inline_seed(tmp_path):
    spec = tmp_path / "inline.py"
    spec.write_text(
        'name = "inline"\nobjectives = {"t": "minimize"}\n'
        'seed_source = "# EVOLVE-BLOCK-START\\nx = 1\\n# EVOLVE-BLOCK-END\\n"\n'
        "def evaluate(output):\n    return {'t': 1.0}\n"
    )
    problem = load_problem(spec)
    assert problem.primary.direction is Direction.MINIMIZE
    assert problem.score({"t": 2.0}) == -2.0  # minimised objectives are oriented


MALFORMED = {
    "missing-name": ('objectives = {"s": "maximize"}\ndef evaluate(o): return {}', "name"),
    "bad-name": (
        'name = "a b"\nobjectives = {"s": "maximize"}\ndef evaluate(o): return {}',
        "name",
    ),
    "missing-evaluate": ('name = "x"\nobjectives = {"s": "maximize"}', "evaluate"),
    "missing-objectives": ('name = "x"\ndef evaluate(o): return {}', "objectives"),
    "bad-direction": (
        'name = "x"\nobjectives = {"s": "up"}\ndef evaluate(o): return {}',
        "objectives",
    ),
    "empty-objectives": ('name = "x"\nobjectives = {}\ndef evaluate(o): return {}', "objectives"),
    "bad-descriptor": (
        'name = "x"\nobjectives = {"s": "maximize"}\ndescriptors = {"d": (1, 0, 3)}'
        "\ndef evaluate(o): return {}",
        "descriptors['d']",
    ),
    "descriptor-shape": (
        'name = "x"\nobjectives = {"s": "maximize"}\ndescriptors = {"d": 3}'
        "\ndef evaluate(o): return {}",
        "descriptors['d']",
    ),
    "bad-timeout-type": (
        'name = "x"\nobjectives = {"s": "maximize"}\ntimeout_s = "10"\ndef evaluate(o): return {}',
        "timeout_s",
    ),
    "raises-on-import": ("raise RuntimeError('boom')", "import"),
}


@pytest.mark.parametrize("spec,field", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_spec_names_file_field_and_fix(make_problem, spec, field):
    folder = make_problem(spec, TRIVIAL_SEED)
    with pytest.raises(ProblemSpecError) as info:
        load_problem(folder)
    message = str(info.value)
    assert str(folder / "problem.py") in message
    assert f": {field}:" in message
    assert info.value.field == field


def test_seed_without_evolve_block(make_problem):
    folder = make_problem(TRIVIAL_SPEC, "def main():\n    return [1, 2]\n")
    with pytest.raises(ProblemSpecError, match="has no EVOLVE-BLOCK.*EVOLVE-BLOCK-START"):
        load_problem(folder)


def test_unclosed_evolve_block(make_problem):
    folder = make_problem(TRIVIAL_SPEC, "# EVOLVE-BLOCK-START\nx = 1\n")
    with pytest.raises(ProblemSpecError, match="line 1 is never closed"):
        load_problem(folder)


def test_missing_seed_file(make_problem):
    with pytest.raises(ProblemSpecError, match="seed_file: .*seed.py does not exist"):
        load_problem(make_problem(TRIVIAL_SPEC))


def test_folder_without_spec(tmp_path):
    with pytest.raises(ProblemSpecError, match="no problem.py"):
        load_problem(tmp_path)
