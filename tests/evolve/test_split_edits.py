"""An edit of several blocks that scored below its parent is tried block by block
(``[search] split_edits``): the block that helped is kept, the call is not wasted."""

from __future__ import annotations

import asyncio
import textwrap

import pytest

from evoforge.archive import Archive, EvalResult, Status
from evoforge.evolve import RunConfig, start_run
from evoforge.evolve.edits import apply_edit, each_block_alone
from evoforge.evolve.run._split import Split, fell_short
from evoforge.problems import load_problem
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC
from tests.evolve import scripted_models

SEED = textwrap.dedent(TRIVIAL_SEED)  # main() returns [a, b]; the score is best at a=1, b=2


def blocks(*pairs: tuple[str, str]) -> str:
    """An answer of SEARCH/REPLACE blocks, with a line of prose as models write it."""
    text = "Two changes.\n"
    for search, replace in pairs:
        text += f"<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"
    return text


HELPS, HURTS = ("    a = 0.5", "    a = 1.0"), ("    b = 0.25", "    b = -5.0")


# --- each block alone --------------------------------------------------------------------


def test_each_block_alone_gives_the_child_each_block_makes_on_the_parent() -> None:
    alone = each_block_alone(SEED, blocks(HELPS, HURTS))
    assert alone == [SEED.replace("a = 0.5", "a = 1.0"), SEED.replace("b = 0.25", "b = -5.0")]
    # the whole edit is both at once
    assert apply_edit(SEED, blocks(HELPS, HURTS)).source == alone[0].replace("b = 0.25", "b = -5.0")


def test_a_unified_diff_is_split_by_hunks_too() -> None:
    answer = textwrap.dedent(
        """\
        ```diff
        @@ -2,3 +2,3 @@
         def main():
        -    a = 0.5
        +    a = 1.0
        @@ -4,3 +4,3 @@
        -    b = 0.25
        +    b = -5.0
             return [a, b]
        ```
        """
    )
    assert each_block_alone(SEED, answer) == each_block_alone(SEED, blocks(HELPS, HURTS))


@pytest.mark.parametrize(
    "answer",
    [
        blocks(HELPS),  # one block: nothing to split
        "```python\ndef main():\n    return [1.0, 2.0]\n```\n",  # a rewrite
        "no edit at all",
        "<think>\n<<<<<<< SEARCH\n    a = 0.5\n=======\n",  # cut off while thinking
    ],
)
def test_what_has_no_parts(answer: str) -> None:
    assert each_block_alone(SEED, answer) == []


def test_two_blocks_that_make_the_same_child_are_one_part() -> None:
    assert each_block_alone(SEED, blocks(HELPS, HELPS)) == [SEED.replace("a = 0.5", "a = 1.0")]


def test_a_block_that_needs_an_earlier_one_is_left_out() -> None:
    # the second block's SEARCH text is what the first one wrote
    answer = blocks(HELPS, ("    a = 1.0", "    a = 1.5"), HURTS)
    assert each_block_alone(SEED, answer) == [
        SEED.replace("a = 0.5", "a = 1.0"),
        SEED.replace("b = 0.25", "b = -5.0"),
    ]


# --- in a run ------------------------------------------------------------------------------


def first_child(make_problem, tmp_path, answer: str, **search: object):
    """The run's one child of ``answer`` (budget: the seed, the child and its parts)."""
    scripted_models.SCRIPTS["split"] = [answer]
    config = RunConfig(
        problem=str(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)),
        budget=4,
        workers=1,
        model="scripted/split",
        search={"tune_changed": 0, **search},  # exact evaluation counts
    )
    run, report = asyncio.run(start_run(config, tmp_path / "a.db"))
    with Archive(tmp_path / "a.db") as archive:
        programs = sorted(archive.programs(run.id), key=lambda p: p.seq)
        calls = len(archive.llm_calls(run.id))
    return programs, report, calls


def test_the_block_that_helped_is_kept_when_the_whole_edit_scored_below_its_parent(
    make_problem, tmp_path, scripted
) -> None:
    programs, report, calls = first_child(make_problem, tmp_path, blocks(HELPS, HURTS))
    seed, child = programs[0], programs[1]
    assert child.status is Status.OK
    assert child.source == SEED.replace("a = 0.5", "a = 1.0")  # the second block left out
    assert child.score is not None and seed.score is not None and child.score > seed.score
    assert child.evaluations == 3  # the whole edit, then each block alone
    assert child.edit == blocks(HELPS, HURTS)  # what the model answered, as it answered
    note = child.artifacts["split"]
    assert "together scored -49, below the parent" in note
    assert "2 of them scored -3.0625, -49.25: one of its blocks alone was kept" in note
    assert report.evaluations == 4 and calls == 1


def test_split_edits_0_stores_the_whole_edit(make_problem, tmp_path, scripted) -> None:
    programs, _, _ = first_child(make_problem, tmp_path, blocks(HELPS, HURTS), split_edits=0)
    child = programs[1]
    assert child.source == apply_edit(SEED, blocks(HELPS, HURTS)).source
    assert child.evaluations == 1 and "split" not in child.artifacts


def test_an_edit_that_helped_as_a_whole_is_not_split(make_problem, tmp_path, scripted) -> None:
    also_helps = ("    b = 0.25", "    b = 1.0")
    programs, _, _ = first_child(make_problem, tmp_path, blocks(HELPS, also_helps))
    child = programs[1]
    assert child.source == apply_edit(SEED, blocks(HELPS, also_helps)).source
    assert child.evaluations == 1 and "split" not in child.artifacts


def test_a_block_that_needs_another_block_is_not_evaluated_alone(
    make_problem, tmp_path, scripted
) -> None:
    # the second block calls what the first defines: alone it could only raise NameError
    defines = ("def main():", "def far():\n    return 10.0\n\n\ndef main():")
    uses = ("    b = 0.25", "    b = far()")
    programs, _, _ = first_child(make_problem, tmp_path, blocks(defines, uses))
    child = programs[1]
    assert child.evaluations == 2  # the whole, and the first block alone
    assert "alone, 1 of them scored -3.3125" in child.artifacts["split"]
    assert child.source == apply_edit(SEED, blocks(defines)).source


# --- what is stored ------------------------------------------------------------------------


def test_when_an_edit_is_split_and_what_its_stored_result_says(make_problem) -> None:
    problem = load_problem(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED))

    def ok(score: float, **artifacts: str) -> EvalResult:
        return EvalResult(Status.OK, objectives={"score": score}, artifacts=artifacts)

    assert fell_short(problem, ok(-4.0), -3.0) and not fell_short(problem, ok(-3.0), -3.0)
    assert fell_short(problem, EvalResult(Status.RUNTIME_ERROR), -3.0)
    assert not fell_short(problem, EvalResult(Status.TIMEOUT), -3.0)  # costly, or hostile
    assert not fell_short(problem, ok(-4.0), None)  # a parent without a score: a repair

    split = Split(problem, ok(-4.0, requeued="re-queued 1 time (node lost)"), "whole")
    assert split.outcome() == (split.whole, "whole")  # no part evaluated: the whole as it was
    split.add("first", EvalResult(Status.RUNTIME_ERROR, evaluations=1))
    split.add("second", ok(-2.0, requeued="re-queued 1 time (worker lost)"))
    result, source = split.outcome()
    assert source == "second" and result.objectives == {"score": -2.0}
    assert result.evaluations == 3
    assert result.artifacts["split"].endswith(
        "scored runtime_error, -2: one of its blocks alone was kept"
    )
    # each re-queue is recorded by the run, whichever evaluation it befell
    assert result.artifacts["requeued"] == (
        "re-queued 1 time (node lost); re-queued 1 time (worker lost)"
    )
