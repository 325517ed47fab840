"""Each declaration of a spec is written once, as a field of the problem model: its name, type,
default, rules and fix. The schema that validates specs is made from those fields, and the
loader fills every declared field from it; so adding a declaration is adding one field."""

from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass, field

import pytest

from evoforge.problems import (
    DECLARATIONS,
    Declaration,
    Problem,
    ProblemSpecError,
    _loader,
    load_problem,
)
from evoforge.problems._declared import Limits, declarations, declared
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC

SEED_DECLARATIONS = ("seed_file", "seed_source")
"""The two ways to give the seed, which the problem holds as one field (``seed_source``)."""


def test_the_declarations_are_the_problem_models_declared_fields():
    # a declaration written anywhere else (by hand in the schema) would show up here
    declared_fields = [f.name for f, _ in declarations(Problem)]
    assert DECLARATIONS == tuple(Declaration.model_fields)
    assert list(DECLARATIONS) == [*declared_fields, *SEED_DECLARATIONS]


@pytest.mark.parametrize("name", DECLARATIONS)
def test_every_declaration_has_a_fix(name):
    fix = Declaration.model_fields[name].description
    assert fix and "{keys}" not in fix


@pytest.mark.parametrize(
    ("problem_field", "how"), declarations(Problem), ids=lambda x: getattr(x, "name", "")
)
def test_a_declarations_default_is_the_problem_fields_default(problem_field, how):
    # a default written in the schema too could drift from the problem's: it is read from it
    written = Declaration.model_fields[problem_field.name].get_default(call_default_factory=True)
    if problem_field.default_factory is not dataclasses.MISSING:
        expected = problem_field.default_factory()
    else:
        expected = problem_field.default
    if written is None and how.default is None:
        return  # None stands for the problem's default
    if expected is dataclasses.MISSING:
        assert Declaration.model_fields[problem_field.name].is_required()
        return
    assert (how.read(written) if how.read else written) == expected


@dataclass(frozen=True)
class MoodyProblem(Problem):
    """The problem model with one more declaration: one field, nothing else."""

    mood: str = field(
        default="calm",
        metadata=declared('name the mood, e.g. mood = "calm"', Limits(min_length=1)),
    )


@pytest.fixture
def moody(monkeypatch):
    monkeypatch.setattr(_loader, "Problem", MoodyProblem)


def _spec(extra: str) -> str:
    return textwrap.dedent(TRIVIAL_SPEC) + extra + "\n"


@pytest.mark.usefixtures("moody")
def test_a_new_field_is_declared_validated_and_explained_with_nothing_else(make_problem):
    declared_mood = load_problem(make_problem(_spec('mood = "sunny"'), TRIVIAL_SEED, "a"))
    assert isinstance(declared_mood, MoodyProblem) and declared_mood.mood == "sunny"
    assert load_problem(make_problem(_spec(""), TRIVIAL_SEED, "b")).mood == "calm"
    with pytest.raises(ProblemSpecError) as info:
        load_problem(make_problem(_spec('mood = ""'), TRIVIAL_SEED, "c"))
    assert info.value.field == "mood"
    assert str(info.value).endswith('at least 1 character; name the mood, e.g. mood = "calm"')
    with pytest.raises(ProblemSpecError, match="did you mean 'mood'"):
        load_problem(make_problem(_spec('moood = "sunny"'), TRIVIAL_SEED, "d"))


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('baselines = {"b": {"score": float("inf")}}', "baselines['b']['score']"),
        ('requires = {"valgrind": 1}', "requires['valgrind']"),
        ('descriptors = {"a": (0.0, 1.0, 0)}', "descriptors['a']"),
        ('preload = ["numpy", 2]', "preload[1]"),
        (
            'stages = [{"name": "full", "threshold": {"metric": "m", "min": "x"}}]',
            "stages[0].threshold.min",
        ),
        ('tuning = {"trials": "3"}', "tuning.trials"),
    ],
    ids=["dict-of-dicts", "dict", "range", "list", "table-in-list", "table"],
)
def test_an_error_names_the_place_as_the_spec_writes_it(make_problem, line, field):
    with pytest.raises(ProblemSpecError) as info:
        load_problem(make_problem(_spec(line), TRIVIAL_SEED))
    assert info.value.field == field
