"""An answer that improved its parent is applied to the run's best program too, and that
program evaluated and stored (``[search] carry_to_best``): one model call, two uses."""

from __future__ import annotations

import asyncio
import textwrap

from evoforge.archive import Archive, EvalResult, Program, Status
from evoforge.evolve import RunConfig, start_run
from evoforge.evolve.run._reuse import carries
from evoforge.problems import load_problem
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC
from tests.evolve import scripted_models

SEED = textwrap.dedent(TRIVIAL_SEED)  # main() returns [a, b]; the score is -(a-1)²-(b-2)²


def block(search: str, replace: str) -> str:
    return f"One change.\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"


# seed -3.3125; the first child -3.0625 (the run's best); the second, from the seed on another
# island, -3.14: better than its parent, not than the best. On the best it makes -2.89.
FIRST = block("    a = 0.5", "    a = 1.0")
SECOND = block("    b = 0.25", "    b = 0.3")


def run(make_problem, tmp_path, answers: list[str], **search: object):
    """The run's programs in ``seq`` order, its report and its model calls (budget 4: the
    seed and three evaluations; islands take turns, so each child has the seed as parent)."""
    scripted_models.SCRIPTS["carry"] = answers
    config = RunConfig(
        problem=str(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)),
        budget=4,
        workers=1,
        model="scripted/carry",
        modes={"rewrite": 0, "crossover": 0},
        search={"tune_changed": 0, **search},  # exact evaluation counts
    )
    info, report = asyncio.run(start_run(config, tmp_path / "a.db"))
    with Archive(tmp_path / "a.db") as archive:
        programs = sorted(archive.programs(info.id), key=lambda p: p.seq)
        calls = len(archive.llm_calls(info.id))
    return programs, report, calls, report.best_program_id


def test_an_edit_that_improved_its_parent_is_carried_to_the_runs_best(
    make_problem, tmp_path, scripted
) -> None:
    programs, report, calls, best = run(make_problem, tmp_path, [FIRST, SECOND])
    seed, first, second, carried = programs
    assert [p.edit_kind for p in programs] == ["seed", "diff", "diff", "carry"]
    assert first.parent_id == second.parent_id == seed.id
    assert carried.source == SEED.replace("a = 0.5", "a = 1.0").replace("b = 0.25", "b = 0.3")
    assert carried.status is Status.OK and carried.score == -((0.3 - 2.0) ** 2)
    assert carried.parent_id == first.id  # the best it was applied to
    assert carried.inspiration_ids == (second.id,)  # whose edit it is
    assert carried.edit == second.edit == SECOND and carried.model == second.model
    assert carried.island == first.island
    assert carried.edit_match == "exact"  # the rule that located the edit on the best
    assert carried.artifacts["carried"] == (
        f"the edit of program {second.id} (seq 2), which took its parent {seed.id} from "
        f"-3.3125 to -3.14, applied to the run's best program {first.id} (score -3.0625)"
    )
    # one evaluation of the budget, no model call; the carried program is the run's best
    assert report.evaluations == 4 and calls == 2 and best == carried.id
    # the first child was the best itself when stored: nothing to carry it to
    assert sum(p.edit_kind == "carry" for p in programs) == 1


def test_carry_to_best_false_leaves_the_best_alone(make_problem, tmp_path, scripted) -> None:
    programs, report, calls, _ = run(
        make_problem,
        tmp_path,
        [FIRST, SECOND, block("    b = 0.25", "    b = 0.2")],
        carry_to_best=False,
    )
    assert "carry" not in {p.edit_kind for p in programs}
    assert report.evaluations == 4 and calls == 3


def test_an_edit_that_does_not_apply_to_the_best_is_not_carried(
    make_problem, tmp_path, scripted
) -> None:
    # it changes the very line the best changed: its SEARCH text is not in the best
    other_a = block("    a = 0.5", "    a = 0.7")
    programs, report, calls, _ = run(
        make_problem, tmp_path, [FIRST, other_a, block("    b = 0.25", "    b = 0.2")]
    )
    assert "carry" not in {p.edit_kind for p in programs}
    assert report.evaluations == 4 and calls == 3


def test_what_is_carried(make_problem) -> None:
    problem = load_problem(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED))

    def ok(score: float, **artifacts: str) -> EvalResult:
        return EvalResult(Status.OK, objectives={"score": score}, artifacts=artifacts)

    def parent(score: float | None) -> Program:
        status = Status.OK if score is not None else Status.RUNTIME_ERROR
        return Program("r", "p", 1, "x", None, 0, 1, status, score=score)

    assert carries(problem, ok(-2.0), parent(-3.0), "diff")
    assert not carries(problem, ok(-2.0), parent(-3.0), "rewrite")  # would replace the best's code
    assert not carries(problem, ok(-3.0), parent(-3.0), "diff")  # held its parent's score
    assert not carries(problem, ok(-4.0), parent(-3.0), "diff")
    assert not carries(problem, EvalResult(Status.RUNTIME_ERROR), parent(-3.0), "diff")
    # one block of an edit that fell short as a whole: the whole answer is not what helped
    assert not carries(problem, ok(-2.0, split="one block alone was kept"), parent(-3.0), "diff")
    assert not carries(problem, ok(-2.0), parent(None), "diff")  # a repair of a failed program
