"""Per-instance scores declared by a problem: loaded, refused when malformed, required by the
selection that uses them."""

from __future__ import annotations

import pytest

from evoforge.evolve.config import ConfigError, RunConfig
from evoforge.problems import InstanceScores, ProblemSpecError, load_problem
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC


def test_a_spec_declares_where_its_per_instance_scores_are(make_problem):
    spec = TRIVIAL_SPEC + '    instances = {"metric": "per_set", "direction": "minimize"}\n'
    problem = load_problem(make_problem(spec, TRIVIAL_SEED))
    assert problem.instances == InstanceScores(metric="per_set", direction="minimize")
    assert load_problem(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED, name="plain")).instances is None


def test_a_malformed_declaration_names_the_field_and_the_fix(make_problem):
    spec = TRIVIAL_SPEC + '    instances = {"metric": "per_set", "direction": "down"}\n'
    with pytest.raises(ProblemSpecError, match=r"instances\.direction.*'maximize' or 'minimize'"):
        load_problem(make_problem(spec, TRIVIAL_SEED))


def test_per_instance_selection_needs_a_problem_that_declares_instances(make_problem):
    from evoforge.evolve.run._host_fit import prepare_session

    folder = make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)
    config = RunConfig(problem=str(folder), islands={"selection": "pareto_instances"})
    with pytest.raises(ConfigError, match="declares none; declare where evaluate"):
        prepare_session(load_problem(folder), config)
