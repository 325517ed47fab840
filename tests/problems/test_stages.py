"""Stages, thresholds and tuning: one model each, validated alike in a spec and in Python."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from evoforge.base.settings import ConfigError
from evoforge.problems import (
    Declaration,
    Direction,
    ProblemSpecError,
    Stage,
    Threshold,
    Tuning,
    define_problem,
    load_problem,
)
from evoforge.problems._stages import stage_defaults
from tests.conftest import TRIVIAL_SEED

ROOT = Path(__file__).resolve().parents[2]
HEAD = 'name = "x"\nobjectives = {"s": "maximize"}\ndef evaluate(o): return {}\n'


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda: Threshold(metric="accuracy"), "sets neither min nor max"),
        (lambda: Threshold(metric="accuracy", min=2.0, max=1.0), "no value could pass"),
        (lambda: Threshold(metric="accuracy", min=float("nan")), "min = nan: expected a finite"),
        (lambda: Stage(name="a b", timeout_s=1.0), "name that is an identifier"),
        (lambda: Stage(name="quick"), "timeout_s: missing"),
        (lambda: Stage(name="quick", timeout_s=0), "timeout_s = 0: must be more than 0"),
        (lambda: Stage(name="quick", timeout_s=1.0, args=(object(),)), "cannot be sent"),
        (lambda: Stage(name="quick", timeout_s=1.0, tmeout=2), "unknown setting tmeout"),
        (lambda: Tuning(trials=0), "trials = 0: must be at least 1"),
        (lambda: Tuning(trials=3, direction="up"), "'maximize' or 'minimize'"),
    ],
    ids=[
        "no-bound",
        "empty-range",
        "nan-bound",
        "stage-name",
        "no-timeout",
        "zero-timeout",
        "args-not-json",
        "unknown-key",
        "no-trials",
        "bad-direction",
    ],
)
def test_built_in_python_they_are_checked_like_a_declaration(build, words):
    with pytest.raises(ConfigError, match=words):
        build()


def test_built_in_python_they_equal_the_declared_ones(make_problem):
    spec = HEAD + (
        "def evaluate_quick(o): return {}\n"
        'stages = [{"name": "quick", "threshold": {"metric": "a", "min": 1}}, {"name": "full"}]\n'
        'tuning = {"trials": 3, "direction": "minimize", "metric": "t", "stage": "quick"}\n'
    )
    problem = load_problem(make_problem(spec, TRIVIAL_SEED))
    quick = Stage(
        name="quick",
        timeout_s=30.0,
        evaluate="evaluate_quick",
        threshold=Threshold(metric="a", min=1.0),
    )
    assert problem.stages == (quick, Stage(name="full", timeout_s=30.0))
    assert problem.tuning == Tuning(
        trials=3, direction=Direction.MINIMIZE, metric="t", stage="quick"
    )
    assert problem.tuning is not None and problem.tuning.direction is Direction.MINIMIZE
    assert not problem.tuning.maximize(problem)


def test_held_out_stages_are_each_scored_by_their_own_function(make_problem):
    spec = HEAD + (
        "timeout_s = 4\nmemory_mb = 64\n"
        "def evaluate_a(o): return {}\ndef evaluate_b(o): return {}\n"
        'held_out = [{"name": "a"}, {"name": "b", "timeout_s": 9}]\n'
    )
    problem = load_problem(make_problem(spec, TRIVIAL_SEED))
    assert problem.held_out == (
        Stage(name="a", timeout_s=4.0, memory_mb=64, evaluate="evaluate_a"),
        Stage(name="b", timeout_s=9.0, memory_mb=64, evaluate="evaluate_b"),
    )


@pytest.mark.parametrize(
    ("tables", "held_out", "expected"),
    [
        (
            [{"name": "q"}],
            False,
            [{"name": "q", "timeout_s": 5, "memory_mb": 64, "evaluate": "evaluate"}],
        ),
        (
            [{"name": "q"}],
            True,
            [{"name": "q", "timeout_s": 5, "memory_mb": 64, "evaluate": "evaluate_q"}],
        ),
        (
            [{"name": "q", "timeout_s": 1, "evaluate": "mine"}, {"name": "f", "memory_mb": 8}],
            False,
            [
                {"name": "q", "timeout_s": 1, "memory_mb": 64, "evaluate": "mine"},
                {"name": "f", "timeout_s": 5, "memory_mb": 8, "evaluate": "evaluate"},
            ],
        ),
        # what validation must refuse is left as it was, for its own message
        ("quick", False, "quick"),
        (["quick"], False, ["quick"]),
        ([{"name": 3}], False, [{"name": 3, "timeout_s": 5, "memory_mb": 64}]),
    ],
    ids=["last", "held-out", "declared-win", "not-a-list", "not-a-table", "bad-name"],
)
def test_stage_defaults_come_from_the_problem(tables, held_out, expected):
    assert stage_defaults(tables, timeout_s=5, memory_mb=64, held_out=held_out) == expected


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
BOUND = st.none() | st.floats(-1e6, 1e6)
THRESHOLDS = st.none() | st.builds(
    lambda metric, low, high: Threshold(
        metric=metric, min=low, max=high if low is None or high is None or high >= low else low
    ),
    st.text(min_size=1, max_size=8),
    st.floats(-1e6, 1e6),
    BOUND,
)
STAGES = st.builds(
    lambda name, args, kwargs, timeout, memory, evaluate, threshold: Stage(
        name=name,
        args=tuple(args),
        kwargs=kwargs,
        timeout_s=timeout,
        memory_mb=memory,
        evaluate=evaluate,
        threshold=threshold,
    ),
    st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
    st.lists(JSON, max_size=3),
    st.dictionaries(st.text(max_size=5), JSON, max_size=3),
    st.floats(0.001, 1e4),
    st.integers(1, 1 << 16),
    st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
    THRESHOLDS,
)


@given(st.lists(STAGES, min_size=1, max_size=3, unique_by=lambda s: s.name))
def test_a_stage_written_as_its_dump_declares_the_same_stage(stages):
    # adapters write stages into spec files this way; what loads must be what was written
    tables = [stage.model_dump() for stage in stages]
    declared = Declaration.parse({"name": "x", "objectives": {"s": "maximize"}, "stages": tables})
    assert declared.stages == tuple(stages)


def test_an_invalid_problem_timeout_is_reported_not_the_stages(make_problem):
    folder = make_problem(HEAD + 'timeout_s = -1\nstages = [{"name": "full"}]\n', TRIVIAL_SEED)
    with pytest.raises(ProblemSpecError) as info:
        load_problem(folder)
    assert info.value.field == "timeout_s"


MALFORMED_TUNING = {
    "unknown-key": ('tuning = {"trials": 3, "knob": 2}', "tuning", "did you mean 'knobs'"),
    "trials-text": ('tuning = {"trials": "3"}', "tuning.trials", "expected a whole number"),
    "bad-direction": (
        'tuning = {"trials": 3, "metric": "m", "direction": "up"}',
        "tuning.direction",
        "'maximize' or 'minimize'",
    ),
    "unknown-stage": ('tuning = {"trials": 3, "stage": "nope"}', "spec", "not one of the stages"),
    "metric-needs-direction": (
        'def evaluate_q(o): return {}\nstages = [{"name": "q"}, {"name": "f"}]\n'
        'tuning = {"trials": 3, "stage": "q", "metric": "m"}',
        "spec",
        "needs a direction",
    ),
    "empty-evaluate": (
        'stages = [{"name": "q", "evaluate": ""}, {"name": "f"}]',
        "stages[0].evaluate",
        "at least 1 character",
    ),
}


@pytest.mark.parametrize(
    ("body", "field", "words"), MALFORMED_TUNING.values(), ids=MALFORMED_TUNING.keys()
)
def test_malformed_tuning_names_the_field_and_the_fix(make_problem, body, field, words):
    with pytest.raises(ProblemSpecError, match=words) as info:
        load_problem(make_problem(HEAD + body + "\n", TRIVIAL_SEED))
    assert info.value.field == field


def test_the_problem_model_is_read_without_pydantic():
    # the archive and the `evoforge` command read objectives and descriptors; only a problem
    # with stages or tuning (loaded, so validated) brings the pydantic models in
    code = (
        "import sys\n"
        "from evoforge.problems import Descriptor, Direction, Objective, Problem\n"
        "Problem('p', __import__('pathlib').Path('p.py'), '', (Objective('s'),)).primary\n"
        "print('pydantic' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "False"


def test_define_problem_takes_stages_and_tuning_built_in_python(tmp_path):
    stages = (
        Stage(
            name="quick",
            args=(3,),
            timeout_s=2.0,
            evaluate="evaluate_quick",
            threshold=Threshold(metric="s", min=0.5),
        ),
        Stage(name="full", kwargs={"n": [1, 2]}, timeout_s=5.0, memory_mb=512),
    )
    tuning = Tuning(trials=2, stage="quick", metric="s", direction=Direction.MINIMIZE)
    problem = define_problem(
        "staged",
        seed=TRIVIAL_SEED,
        evaluate="def evaluate_quick(o):\n    return {}\n\ndef evaluate(o):\n    return {}\n",
        objectives={"s": "maximize"},
        stages=list(stages),
        tuning=tuning,
        folder=tmp_path / "staged",
    )
    assert problem.stages == stages and problem.tuning == tuning
