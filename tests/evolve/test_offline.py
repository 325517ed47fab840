"""The offline mutation model: its answers apply, respect frozen code, and are reproducible."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from evoforge.evolve.checks._syntax import check_syntax
from evoforge.evolve.edits import EditError, apply_edit
from evoforge.evolve.offline._mutator import DEFAULT_WEIGHTS, NOTHING_TO_CHANGE, mutate
from evoforge.problems._blocks import frozen_parts

PARAMETRIC = '''\
"""Place points: a parametric heuristic."""
import math

# EVOLVE-BLOCK-START
STEP = 0.05
DECAY = 0.98
N_ITERS = 200


def radius_for(i, n):
    base = 0.5 / math.sqrt(n)
    if i % 2 == 0:
        return base * 1.1
    return base * 0.9


def optimise(xs, ys):
    step = STEP
    for it in range(N_ITERS):
        for i in range(len(xs)):
            xs[i] = min(1.0, max(0.0, xs[i] + step * math.cos(it + i)))
            ys[i] = min(1.0, max(0.0, ys[i] - step * math.sin(it * i)))
        step *= DECAY
        if step < 1e-4 and it > 10:
            break
    return xs, ys
# EVOLVE-BLOCK-END


def evaluate():
    xs = [0.1 * i for i in range(10)]
    ys = [0.5] * 10
    xs, ys = optimise(xs, ys)
    return sum(radius_for(i, 10) for i in range(10))
'''

TWO_REGIONS = """\
import numpy as np


def score(x):
    # EVOLVE-BLOCK-START
    a = 3.0
    b = 0.25
    total = 0
    for k in range(4):
        total += a * x[k] - b
    return total > 2 and a >= b
    # EVOLVE-BLOCK-END


FIXED = 12


# EVOLVE-BLOCK-START
def helper(v):
    w = v * 2.5 + 1
    return w
# EVOLVE-BLOCK-END
"""

INSPIRATION = PARAMETRIC.replace("STEP = 0.05", "STEP = 0.08").replace(
    "    return base * 0.9\n", "    return base * 0.85 + 0.01\n"
)
PARENTS = {"parametric": PARAMETRIC, "two-regions": TWO_REGIONS}


def child(parent: str, answer: str) -> str:
    source = apply_edit(parent, answer).source
    assert frozen_parts(source) == frozen_parts(parent)
    assert source != parent
    return source


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(PARENTS)), seed=st.integers(0, 2**63), insp=st.booleans())
def test_answers_apply_keep_frozen_code_and_change_something(name, seed, insp) -> None:
    parent = PARENTS[name]
    answer = mutate(parent, [INSPIRATION] if insp else [], np.random.default_rng(seed))
    assert 1 <= answer.count("<<<<<<< SEARCH") <= 3
    assert "\n" not in answer.split("\n\n", 1)[0]  # one short line of prose first
    child(parent, answer)  # every answer applies (the required rate is 95 %)


@pytest.mark.parametrize("name", sorted(PARENTS))
def test_success_rate_and_syntax_over_many_seeds(name: str) -> None:
    parent, applied, valid = PARENTS[name], 0, 0
    for seed in range(300):
        try:
            source = child(parent, mutate(parent, [INSPIRATION], np.random.default_rng(seed)))
        except EditError:
            continue
        applied += 1
        valid += check_syntax(source) is None
    assert applied >= 0.95 * 300
    assert valid >= 0.95 * applied


def test_same_seed_same_answer_and_seeds_differ() -> None:
    answers = [mutate(PARAMETRIC, [INSPIRATION], np.random.default_rng(s)) for s in (1, 1, 2, 3)]
    assert answers[0] == answers[1]
    assert len(set(answers)) == 3


def test_constant_perturbation_dominates() -> None:
    counts = {"constant": 0, "other": 0}
    for seed in range(200):
        first = mutate(PARAMETRIC, [], np.random.default_rng(seed)).split("\n", 1)[0]
        for note in first.split(";"):
            is_number = "->" in note and "'" not in note
            counts["constant" if is_number else "other"] += 1
    assert counts["constant"] > counts["other"]


def only(name: str) -> dict[str, float]:
    return {name: 1.0}


@pytest.mark.parametrize("operator", sorted(set(DEFAULT_WEIGHTS) - {"crossover"}))
def test_each_operator_alone_yields_applicable_edits(operator: str) -> None:
    for seed in range(30):
        child(
            PARAMETRIC, mutate(PARAMETRIC, [], np.random.default_rng(seed), weights=only(operator))
        )


def test_integer_loop_counts_stay_positive_and_ints_stay_ints() -> None:
    parent = "# EVOLVE-BLOCK-START\nfor i in range(1):\n    pass\n# EVOLVE-BLOCK-END\n"
    for seed in range(50):
        source = child(parent, mutate(parent, [], np.random.default_rng(seed)))
        count = source.split("range(", 1)[1].split(")", 1)[0]
        assert count.isdigit() and int(count) >= 1


def test_floats_keep_their_sign_and_stay_floats() -> None:
    parent = "# EVOLVE-BLOCK-START\nx = -0.5\n# EVOLVE-BLOCK-END\n"
    for seed in range(100):
        source = child(parent, mutate(parent, [], np.random.default_rng(seed)))
        value = source.split("x = ", 1)[1].split("\n", 1)[0]
        assert value.startswith("-") and isinstance(eval(value), float) and float(value) < 0


def test_deleting_the_only_statement_leaves_pass() -> None:
    parent = "# EVOLVE-BLOCK-START\ndef f(x):\n    x.append(1)\n# EVOLVE-BLOCK-END\n"
    source = child(parent, mutate(parent, [], np.random.default_rng(0), weights=only("delete")))
    assert source == "# EVOLVE-BLOCK-START\ndef f(x):\n    pass\n# EVOLVE-BLOCK-END\n"


def test_search_text_grows_until_unique() -> None:
    parent = (
        "# EVOLVE-BLOCK-START\ndef f():\n    a = 1\n    return a\n\n\n"
        "def g():\n    a = 1\n    return a * 2\n# EVOLVE-BLOCK-END\n"
    )
    for seed in range(40):
        answer = mutate(parent, [], np.random.default_rng(seed), weights=only("constant"))
        search = answer.split("<<<<<<< SEARCH\n", 1)[1].split("=======\n", 1)[0]
        assert parent.count(search) == 1
        child(parent, answer)


def test_crossover_copies_a_definition_from_the_inspiration() -> None:
    answers = [
        mutate(PARAMETRIC, [INSPIRATION], np.random.default_rng(s), weights=only("crossover"))
        for s in range(20)
    ]
    sources = {child(PARAMETRIC, answer) for answer in answers}
    assert any("return base * 0.85 + 0.01" in s for s in sources)  # a whole def
    assert any("STEP = 0.08" in s for s in sources)  # the differing constant
    assert all("take" in answer.split("\n", 1)[0] for answer in answers)


def test_crossover_copies_differing_literals_at_the_same_position() -> None:
    other = PARAMETRIC.replace("if step < 1e-4 and it > 10:", "if step < 3e-4 and it > 20:")
    answer = mutate(PARAMETRIC, [other], np.random.default_rng(0), weights=only("crossover"))
    source = child(PARAMETRIC, answer)
    assert "if step < 3e-4 and it > 20:" in source
    assert "constants of optimise" in answer


def test_crossover_without_differences_falls_back_to_nothing() -> None:
    answer = mutate(PARAMETRIC, [PARAMETRIC], np.random.default_rng(0), weights=only("crossover"))
    assert answer == NOTHING_TO_CHANGE


@pytest.mark.parametrize(
    "parent",
    [
        pytest.param("# EVOLVE-BLOCK-START\n# EVOLVE-BLOCK-END\n", id="empty-region"),
        pytest.param("# EVOLVE-BLOCK-START\nimport os\n# EVOLVE-BLOCK-END\n", id="no-sites"),
        pytest.param("x = 1\n", id="no-region"),
    ],
)
def test_nothing_mutable_explains_and_fails_as_an_edit(parent: str) -> None:
    answer = mutate(parent, [], np.random.default_rng(0))
    assert "<<<<<<<" not in answer and "edit" in answer
    with pytest.raises(Exception, match="no SEARCH/REPLACE block|no EVOLVE-BLOCK"):
        apply_edit(parent, answer)


def test_code_outside_regions_is_never_touched() -> None:
    parent = "x = 1.5\n# EVOLVE-BLOCK-START\ny = 2.5\n# EVOLVE-BLOCK-END\nz = 3.5\n"
    for seed in range(30):
        source = child(parent, mutate(parent, [], np.random.default_rng(seed)))
        assert source.startswith("x = 1.5\n") and source.endswith("z = 3.5\n")


def test_non_ascii_program() -> None:
    parent = "# EVOLVE-BLOCK-START\nname = 'ünïcode'\nk = 2.0  # größe\n# EVOLVE-BLOCK-END\n"
    for seed in range(20):
        assert "ünïcode" in child(parent, mutate(parent, [], np.random.default_rng(seed)))
