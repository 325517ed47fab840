"""The problem spec DSL: valid specs load; malformed ones fail with file, field and fix."""

from __future__ import annotations

import textwrap

import pytest

from evoforge.problems import Direction, ProblemSpecError, Stage, Threshold, load_problem
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
        "objectives['s']",
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


# --- cascade stages ---------------------------------------------------------------------------

STAGED = """
name = "staged"
objectives = {"s": "maximize"}
timeout_s = 7
memory_mb = 256
stages = [
    {"name": "quick", "args": [3], "timeout_s": 0.5,
     "threshold": {"metric": "accuracy", "min": 0.9}},
    {"name": "medium", "kwargs": {"n": 50}, "evaluate": "score_medium", "memory_mb": 128,
     "threshold": {"metric": "seconds", "max": 2}},
    {"name": "full", "args": [1000]},
]
def evaluate_quick(o): return {}
def score_medium(o): return {}
def evaluate(o): return {}
"""


def test_stages_load_with_defaults(make_problem):
    problem = load_problem(make_problem(STAGED, TRIVIAL_SEED))
    assert problem.stages == (
        Stage(
            name="quick",
            args=(3,),
            timeout_s=0.5,
            memory_mb=256,
            evaluate="evaluate_quick",
            threshold=Threshold(metric="accuracy", min=0.9),
        ),
        Stage(
            name="medium",
            kwargs={"n": 50},
            timeout_s=7.0,
            memory_mb=128,
            evaluate="score_medium",
            threshold=Threshold(metric="seconds", max=2.0),
        ),
        Stage(name="full", args=(1000,), timeout_s=7.0, memory_mb=256, evaluate="evaluate"),
    )


def test_no_stages_means_no_cascade(make_problem):
    assert load_problem(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)).stages == ()


_HEAD = 'name = "x"\nobjectives = {"s": "maximize"}\ndef evaluate(o): return {}\n'
_QUICK = "def evaluate_quick(o): return {}\n"
MALFORMED_STAGES = {
    "not-a-list": ('stages = {"name": "quick"}', "stages"),
    "empty": ("stages = []", "stages"),
    "entry-not-a-dict": ('stages = ["quick"]', "stages[0]"),
    "unknown-key": ('stages = [{"name": "full", "timeout": 3}]', "stages[0]"),
    "missing-name": ('stages = [{"args": [1]}]', "stages[0].name"),
    "name-not-identifier": ('stages = [{"name": "a b"}]', "stages[0].name"),
    "duplicate-name": (
        _QUICK + 'stages = [{"name": "quick"}, {"name": "quick"}]',
        "stages[1].name",
    ),
    "no-stage-function": ('stages = [{"name": "quick"}, {"name": "full"}]', "stages[0].evaluate"),
    "last-stage-not-evaluate": (
        _QUICK + 'stages = [{"name": "full", "evaluate": "evaluate_quick"}]',
        "stages[0].evaluate",
    ),
    "args-not-a-list": ('stages = [{"name": "full", "args": 3}]', "stages[0].args"),
    "kwargs-not-a-dict": ('stages = [{"name": "full", "kwargs": [1]}]', "stages[0].kwargs"),
    "args-not-json": ('stages = [{"name": "full", "args": [object()]}]', "stages[0]"),
    "bad-timeout": ('stages = [{"name": "full", "timeout_s": 0}]', "stages[0].timeout_s"),
    "bad-memory": ('stages = [{"name": "full", "memory_mb": 1.5}]', "stages[0].memory_mb"),
    "threshold-not-a-dict": (
        'stages = [{"name": "full", "threshold": 0.9}]',
        "stages[0].threshold",
    ),
    "threshold-no-bounds": (
        'stages = [{"name": "full", "threshold": {"metric": "s"}}]',
        "stages[0].threshold",
    ),
    "threshold-no-metric": (
        'stages = [{"name": "full", "threshold": {"min": 1}}]',
        "stages[0].threshold.metric",
    ),
    "threshold-bad-bound": (
        'stages = [{"name": "full", "threshold": {"metric": "s", "min": "high"}}]',
        "stages[0].threshold.min",
    ),
    "threshold-empty-range": (
        'stages = [{"name": "full", "threshold": {"metric": "s", "min": 2, "max": 1}}]',
        "stages[0].threshold",
    ),
    "threshold-unknown-key": (
        'stages = [{"name": "full", "threshold": {"metric": "s", "above": 1}}]',
        "stages[0].threshold",
    ),
}


@pytest.mark.parametrize("body,field", MALFORMED_STAGES.values(), ids=MALFORMED_STAGES.keys())
def test_malformed_stages_name_the_field_and_the_fix(make_problem, body, field):
    folder = make_problem(_HEAD + body, TRIVIAL_SEED)
    with pytest.raises(ProblemSpecError) as info:
        load_problem(folder)
    assert info.value.field == field
    assert f"problem.py: {field}: " in str(info.value)
    assert len(str(info.value).split(f"{field}: ", 1)[1]) > 20  # says what to do, not just "bad"


@pytest.mark.parametrize(
    ("line", "field", "meant"),
    [
        ('objective = {"s": "maximize"}', "objective", "objectives"),
        ("timeout = 5", "timeout", "timeout_s"),
        ('descriptor = {"a": (0, 1, 2)}', "descriptor", "descriptors"),
    ],
    ids=["objective", "timeout", "descriptor"],
)
def test_a_misspelled_declaration_is_an_error_not_ignored(make_problem, line, field, meant):
    folder = make_problem(textwrap.dedent(TRIVIAL_SPEC) + line + "\n", TRIVIAL_SEED)
    with pytest.raises(ProblemSpecError, match=f"did you mean '{meant}'") as info:
        load_problem(folder)
    assert info.value.field == field


def test_the_specs_own_names_are_left_alone(make_problem):
    spec = textwrap.dedent(TRIVIAL_SPEC) + "TOL = 1e-9\n_cache = {}\natol = 1e-6\nsize = 3\n"
    assert load_problem(make_problem(spec, TRIVIAL_SEED)).name == "tiny"
