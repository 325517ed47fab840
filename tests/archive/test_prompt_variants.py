"""Prompt variants in the archive: storing them once, reading them back, and counting what
their children did in SQL (the numbers a bandit replays and ``evoforge prompts`` shows)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings, strategies as st

from evoforge.archive import Archive, ArchiveError, PromptVariant, Status, improved, variant_id
from tests.archive.conftest import MakeProgram, build_program, new_run

SYSTEM = "You improve $problem_name."


def variant(run_id: str, text: str = SYSTEM, **fields) -> PromptVariant:
    return PromptVariant.make(run_id, {"system": text, "task_diff": "Improve $primary."}, **fields)


def test_a_variant_is_stored_once_and_read_back(archive: Archive, run_id: str):
    first = variant(run_id, origin="default", created_at=1.0)
    child = variant(run_id, "Be bold.", origin="bank", parent_id=first.id, seq=40, note="bold")
    assert archive.add_prompt_variant(first) is True
    assert archive.add_prompt_variant(child) is True
    assert archive.add_prompt_variant(dataclasses.replace(first, note="again")) is False
    assert archive.prompt_variants(run_id) == [first, child]
    assert len(first.id) == 16 and first.id == variant_id(first.templates)


def test_same_templates_in_another_order_are_the_same_variant(run_id: str):
    a = PromptVariant.make(run_id, {"system": "s", "task_diff": "t"}, origin="default")
    b = PromptVariant.make(run_id, {"task_diff": "t", "system": "s"}, origin="bank")
    assert a.id == b.id


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": "0" * 16}, "does not match its templates' content id"),
        ({"origin": "dream"}, "origin 'dream' is not one of"),
    ],
    ids=["forged-id", "unknown-origin"],
)
def test_a_malformed_variant_is_refused(archive: Archive, run_id: str, change, message):
    with pytest.raises(ValueError, match=message):
        archive.add_prompt_variant(dataclasses.replace(variant(run_id, origin="bank"), **change))


def test_answer_formats_cannot_vary(archive: Archive, run_id: str):
    bad = PromptVariant.make(run_id, {"answer_diff": "free-form"}, origin="model")
    with pytest.raises(ValueError, match="answer_diff cannot vary"):
        archive.add_prompt_variant(bad)


def test_a_variant_of_an_unknown_run_is_refused(archive: Archive):
    with pytest.raises(ArchiveError, match="no run 'ghost'"):
        archive.add_prompt_variant(variant("ghost", origin="default"))


def test_stats_count_children_evaluations_and_improvements(
    archive: Archive, run_id: str, make_program: MakeProgram
):
    a, b, idle = (
        variant(run_id, f"v{i}", origin="bank", seq=i, created_at=float(i)) for i in range(3)
    )
    for v in (a, b, idle):
        archive.add_prompt_variant(v)
    seed = make_program(score=1.0)
    failed = make_program(status=Status.RUNTIME_ERROR, parent_id=seed.id, prompt_variant=a.id)
    # a: one better child, one worse, one edit error (not evaluated), one failure.
    make_program(score=2.0, parent_id=seed.id, prompt_variant=a.id)
    make_program(score=0.5, parent_id=seed.id, prompt_variant=a.id)
    edit_error = make_program(status=Status.EDIT_ERROR, parent_id=seed.id, prompt_variant=a.id)
    # b: a repair of a's failure (its parent has no score: a repair that works improves) and
    # a child equal to its parent (not an improvement).
    make_program(score=0.1, parent_id=failed.id, prompt_variant=b.id)
    make_program(score=1.0, parent_id=seed.id, prompt_variant=b.id)
    make_program(score=9.0, parent_id=seed.id)  # no variant: counted nowhere
    stats = {s.variant_id: s for s in archive.prompt_variant_stats(run_id)}
    assert list(stats) == [a.id, b.id, idle.id]
    sa, sb, si = stats[a.id], stats[b.id], stats[idle.id]
    assert (sa.children, sa.evaluated, sa.improved, sa.best_score) == (4, 3, 1, 2.0)
    assert sa.improvement_rate == pytest.approx(1 / 3)
    assert (sb.children, sb.evaluated, sb.improved, sb.best_score) == (2, 2, 1, 1.0)
    assert (si.children, si.evaluated, si.improved, si.best_score, si.improvement_rate) == (
        0, 0, 0, None, None,
    )  # fmt: skip
    assert edit_error.status is Status.EDIT_ERROR


def test_stats_of_a_run_without_variants_are_empty(archive: Archive, run_id: str):
    assert archive.prompt_variant_stats(run_id) == []


@settings(max_examples=40, deadline=None)
@given(
    children=st.lists(
        st.tuples(
            st.integers(0, 2),  # which variant
            st.sampled_from([Status.OK, Status.OK, Status.INCORRECT, Status.SYNTAX_ERROR]),
            st.floats(-5, 5, allow_nan=False),
            st.integers(0, 2),  # which parent: the seed, another child, a failed one
        ),
        max_size=25,
    )
)
def test_stats_equal_counting_in_python(shared_archive: Archive, problem, children):
    """The SQL counts are what counting each stored child with ``improved()`` gives."""
    run_id = new_run(shared_archive, problem)
    variants = [variant(run_id, f"v{i}", origin="bank", seq=i) for i in range(3)]
    for v in variants:
        shared_archive.add_prompt_variant(v)
    parents = [build_program(run_id, 0, score=0.0)]
    parents.append(build_program(run_id, 1, score=2.5))
    parents.append(build_program(run_id, 2, status=Status.TIMEOUT))
    for p in parents:
        shared_archive.add_program(p)
    expected = {v.id: [0, 0, 0, None] for v in variants}
    for seq, (which, status, score, parent) in enumerate(children, start=3):
        child = build_program(
            run_id, seq, status=status, score=score, parent_id=parents[parent].id,
            prompt_variant=variants[which].id,
        )  # fmt: skip
        shared_archive.add_program(child)
        row = expected[variants[which].id]
        row[0] += 1
        row[1] += status.evaluated
        row[2] += improved(child.score, parents[parent].score)
        if child.score is not None:
            row[3] = child.score if row[3] is None else max(row[3], child.score)
    got = {
        s.variant_id: [s.children, s.evaluated, s.improved, s.best_score]
        for s in shared_archive.prompt_variant_stats(run_id)
    }
    assert got == expected
