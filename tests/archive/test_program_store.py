"""Storing and reading programs: round-trips, ids, lookups and refusals."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from evoforge.archive import Archive, ArchiveError, Program, attempt_id, program_id
from evoforge.evaluators import EvalResult, Status
from evoforge.problems import Problem
from tests.archive.conftest import MakeProgram, build_program, new_run

texts = st.text(st.characters(codec="utf-8"))
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()  # unbounded: big ints must survive
    | st.floats(allow_nan=True, allow_infinity=True)
    | texts,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=12,
)
json_dicts = st.dictionaries(texts, json_values, max_size=5)
float_dicts = st.dictionaries(texts, st.floats(allow_nan=True, allow_infinity=True), max_size=4)
str_dicts = st.dictionaries(texts, texts, max_size=4)
int64 = st.integers(-(2**63), 2**63 - 1)


@st.composite
def programs(draw: st.DrawFn, run_id: str) -> Program:
    source = draw(st.none() | texts)
    seq = draw(st.integers(0, 2**62))
    return Program(
        run_id=run_id,
        id=program_id(source) if source is not None else attempt_id(seq),
        seq=seq,
        source=source,
        parent_id=draw(st.none() | texts),
        island=draw(int64),
        generation=draw(int64),
        status=draw(st.sampled_from(Status)),
        edit=draw(st.none() | texts),
        edit_kind=draw(st.sampled_from(["seed", "diff", "rewrite", "crossover"])),
        # REAL columns (score, created_at) keep no sign on zero in SQLite: -0.0 reads back
        # as 0.0; `x + 0.0` draws the zero they can hold. JSON columns keep it.
        score=draw(st.none() | st.floats(allow_nan=False).map(lambda x: x + 0.0)),
        cell=draw(st.none() | int64),
        metrics=draw(json_dicts),
        objectives=draw(float_dicts),
        descriptors=draw(float_dicts),
        artifacts=draw(str_dicts),
        timings=draw(float_dicts),
        device=draw(str_dicts),
        inspiration_ids=tuple(draw(st.lists(texts, max_size=3))),
        model=draw(st.none() | texts),
        created_at=draw(st.floats(allow_nan=False, allow_infinity=False).map(lambda x: x + 0.0)),
    )


def assert_same(got: Any, want: Any, where: str = "program") -> None:
    """Deep equality where NaN equals NaN and types must match exactly (1 is not 1.0)."""
    assert type(got) is type(want), f"{where}: {type(got)} != {type(want)}"
    if dataclasses.is_dataclass(want):
        for f in dataclasses.fields(want):
            assert_same(getattr(got, f.name), getattr(want, f.name), f"{where}.{f.name}")
    elif isinstance(want, dict):
        assert list(got) == list(want), where
        for key in want:
            assert_same(got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, list | tuple):
        assert len(got) == len(want), where
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            assert_same(a, b, f"{where}[{i}]")
    elif isinstance(want, float) and math.isnan(want):
        assert math.isnan(got), where
    else:
        assert got == want, where
        if isinstance(want, float):  # -0.0 stays -0.0
            assert math.copysign(1, got) == math.copysign(1, want), where


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_program_round_trips(shared_archive: Archive, problem: Problem, data) -> None:
    run_id = new_run(shared_archive, problem)
    program = data.draw(programs(run_id))
    shared_archive.add_program(program)
    assert_same(shared_archive.get_program(run_id, program.id), program)
    assert_same(list(shared_archive.programs(run_id)), [program])


@pytest.mark.parametrize(
    "stored",
    ['{"a": 1', '{"a": 1}{"b": 2}', "{}],[{}", "", "NaN x"],
    ids=["unclosed", "two-values", "breaks-out-of-the-array", "empty", "trailing-text"],
)
def test_a_json_column_edited_into_garbage_fails_to_read_and_says_so(
    archive: Archive, make_program: MakeProgram, run_id: str, stored: str
) -> None:
    # Rows are decoded seven columns at a time; a column that is not one JSON value must
    # not shift the others or be read as something it is not.
    program = make_program()
    archive.conn.execute(
        "UPDATE programs SET metrics_json = ? WHERE run_id = ? AND id = ?",
        (stored, run_id, program.id),
    )
    with pytest.raises(json.JSONDecodeError):
        archive.get_program(run_id, program.id)


def test_a_status_edited_into_an_unknown_one_fails_to_read_and_names_it(
    archive: Archive, make_program: MakeProgram, run_id: str
) -> None:
    program = make_program()
    archive.conn.execute(
        "UPDATE programs SET status = 'exploded' WHERE run_id = ? AND id = ?",
        (run_id, program.id),
    )
    with pytest.raises(ValueError, match="'exploded' is not a valid Status"):
        archive.get_program(run_id, program.id)


def test_program_id_is_a_short_content_hash() -> None:
    pid = program_id("def main():\n    return 1\n")
    assert len(pid) == 16 and int(pid, 16) >= 0
    assert pid == program_id("def main():\n    return 1\n")
    assert pid != program_id("def main():\n    return 2\n")
    assert attempt_id(3) != attempt_id(4) and len(attempt_id(3)) == 16


def test_numpy_values_are_stored_as_plain_json(archive: Archive, run_id: str) -> None:
    metrics = {"n": np.int64(3), "x": np.float32(0.5), "v": np.arange(3), "f": np.float64(2.5)}
    archive.add_program(build_program(run_id, 0, metrics=metrics))
    got = archive.get_program(run_id, program_id("def main():\n    return 0\n")).metrics
    assert_same(got, {"n": 3, "x": 0.5, "v": [0, 1, 2], "f": 2.5})


def test_a_nan_score_is_refused(archive: Archive, run_id: str) -> None:
    with pytest.raises(ValueError, match="NaN score; store None"):
        archive.add_program(build_program(run_id, 0, score=math.nan))
    assert archive.count_programs(run_id) == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"seq": 5}, "program .* is already in run 'r-.*'; check has_program"),
        ({"source": "other = 1\n"}, r"\(seq\) 0 is already used .*reserve_seq"),
    ],
    ids=["same-source", "same-seq"],
)
def test_duplicates_are_refused(
    archive: Archive, make_program: MakeProgram, run_id: str, change: dict, message: str
) -> None:
    first = make_program("x = 1\n", seq=0)
    fields = {"seq": first.seq, "source": first.source} | change
    with pytest.raises(ArchiveError, match=message):
        archive.add_program(build_program(run_id, fields["seq"], fields["source"]))
    assert archive.count_programs(run_id) == 1


def test_a_program_of_an_unknown_run_is_refused(archive: Archive) -> None:
    with pytest.raises(ArchiveError, match="no run 'ghost' in .*`evoforge status` lists"):
        archive.add_program(build_program("ghost", 0))


def test_lookups(archive: Archive, make_program: MakeProgram, run_id: str) -> None:
    program = make_program()
    assert archive.has_program(run_id, program.id)
    assert not archive.has_program(run_id, "0" * 16)
    assert not archive.has_program("other", program.id)
    with pytest.raises(ArchiveError, match="no program '0000000000000000' in run .*prefix"):
        archive.get_program(run_id, "0" * 16)


def test_programs_iterates_in_seq_order_with_filters(
    archive: Archive, make_program: MakeProgram, run_id: str
) -> None:
    statuses = [Status.OK, Status.TIMEOUT, Status.OK, Status.EDIT_ERROR] * 300  # > 2 pages
    with archive.transaction():
        for seq in reversed(range(len(statuses))):  # insertion order must not matter
            make_program(seq=seq, status=statuses[seq])
    assert [p.seq for p in archive.programs(run_id)] == list(range(1200))
    assert [p.seq for p in archive.programs(run_id, after_seq=1195)] == [1196, 1197, 1198, 1199]
    ok = [p.seq for p in archive.programs(run_id, status="ok")]
    assert ok == list(range(0, 1200, 2))
    assert archive.count_programs(run_id) == 1200
    assert archive.count_programs(run_id, Status.TIMEOUT) == 300
    assert archive.status_counts(run_id) == {"edit_error": 300, "ok": 600, "timeout": 300}
    assert archive.status_counts("other") == {}


class TestFromResult:
    def make(self, problem: Problem, result: EvalResult, source: str | None = "x = 1\n"):
        return Program.from_result(
            result, problem, run_id="r", seq=7, source=source, parent_id="p", island=2,
            generation=3, edit="answer", edit_kind="diff", inspiration_ids=["a", "b"],
            model="offline/mutate", created_at=12.5,
        )  # fmt: skip

    def test_ok_result_gets_score_and_cell(self, problem: Problem) -> None:
        result = EvalResult(
            Status.OK,
            metrics={"score": 2.0, "time": 1.0, "a": 2.5, "b": 0.1},
            objectives={"score": 2.0, "time": 1.0},
            descriptors={"a": 2.5, "b": 0.1},
            timings={"eval_s": 0.1},
        )
        program = self.make(problem, result)
        assert (program.id, program.score, program.cell) == (program_id("x = 1\n"), 2.0, 6)
        assert (program.seq, program.island, program.generation) == (7, 2, 3)
        assert program.inspiration_ids == ("a", "b")
        assert program.timings == {"eval_s": 0.1} and program.created_at == 12.5

    @pytest.mark.parametrize(
        ("result", "score", "cell"),
        [
            (EvalResult(Status.OK, objectives={"score": math.nan}, descriptors={"a": 0, "b": 0}),
             None, 0),
            (EvalResult(Status.OK, objectives={"time": 1.0}, descriptors={"a": 0, "b": 0}),
             None, 0),
            (EvalResult(Status.OK, objectives={"score": 1.0}, descriptors={"a": 0}), 1.0, None),
            (EvalResult(Status.INCORRECT, objectives={"score": 1.0},
                        descriptors={"a": 0, "b": 0}), None, None),
        ],
        ids=["nan-objective", "missing-objective", "missing-descriptor", "not-ok"],
    )  # fmt: skip
    def test_partial_results(self, problem: Problem, result, score, cell) -> None:
        program = self.make(problem, result)
        assert (program.score, program.cell) == (score, cell)

    def test_no_source_gets_an_attempt_id(self, problem: Problem) -> None:
        program = self.make(problem, EvalResult(Status.EDIT_ERROR), source=None)
        assert program.id == attempt_id(7) and program.source is None


def test_find_equivalent_finds_a_program_by_ast_key_in_its_run_only(
    archive: Archive, make_program: MakeProgram, run_id: str, problem: Problem
) -> None:
    assert archive.find_equivalent(run_id, "00ff00ff00ff00ff") is None
    failed = make_program(ast_key="00ff00ff00ff00ff", status=Status.RUNTIME_ERROR)
    make_program(ast_key=None)
    assert archive.find_equivalent(run_id, "00ff00ff00ff00ff") == failed.id
    other = new_run(archive, problem)
    assert archive.find_equivalent(other, "00ff00ff00ff00ff") is None
