"""Mining a run: finding programs by id prefix, top-k, lineage, diffs, progress."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evoforge.archive import Archive, ArchiveError, Program
from evoforge.evaluators import Status
from evoforge.problems import Problem
from tests.archive.conftest import MakeProgram, build_program, new_run


def with_id(program: Program, new_id: str) -> Program:
    """The same program under a chosen id, to make prefixes collide on purpose."""
    return replace(program, id=new_id)


class TestFindProgram:
    @pytest.fixture
    def stored(self, archive: Archive, run_id: str, problem: Problem) -> dict[str, str]:
        other = new_run(archive, problem)
        ids = {"abc1000000000000": run_id, "abc2000000000000": run_id,
               "def0000000000000": run_id, "fed0000000000000": other,
               "0110000000000000": run_id, "0110000000000001": other}  # fmt: skip
        for seq, (pid, rid) in enumerate(ids.items()):
            archive.add_program(with_id(build_program(rid, seq), pid))
        return ids

    @pytest.mark.parametrize(
        "query", ["def0000000000000", "def", "DEF", " de "], ids=["full", "prefix", "upper", "ws"]
    )
    def test_unique_prefix(self, archive: Archive, stored: dict, query: str) -> None:
        assert archive.find_program(query).id == "def0000000000000"

    def test_within_a_run(self, archive: Archive, stored: dict, run_id: str) -> None:
        assert archive.find_program("011", run_id).id == "0110000000000000"
        assert archive.find_program("fed").run_id != run_id

    def test_ambiguous_lists_the_candidates(self, archive: Archive, stored: dict) -> None:
        with pytest.raises(ArchiveError) as error:
            archive.find_program("abc")
        message = str(error.value)
        assert "prefix 'abc' is ambiguous in any run" in message
        assert "abc1000000000000" in message and "abc2000000000000" in message
        assert message.endswith("give more digits or a run id")

    def test_ambiguous_across_runs(self, archive: Archive, stored: dict) -> None:
        with pytest.raises(ArchiveError, match="ambiguous in any run.*or a run id"):
            archive.find_program("011")

    def test_none_gives_a_fix(self, archive: Archive, stored: dict, run_id: str) -> None:
        with pytest.raises(ArchiveError, match="no program id starting with '99' in any run"):
            archive.find_program("99")
        with pytest.raises(ArchiveError, match=f"starting with 'fed' in run '{run_id}'.*16 hex"):
            archive.find_program("fed", run_id)

    @pytest.mark.parametrize(
        ("query", "run", "message"),
        [("", None, "no program id given"), ("abc", "ghost", "no run 'ghost'")],
        ids=["empty", "unknown-run"],
    )
    def test_bad_queries(self, archive: Archive, stored: dict, query, run, message) -> None:
        with pytest.raises(ArchiveError, match=message):
            archive.find_program(query, run)


def test_top_orders_by_score_then_seq(
    archive: Archive, make_program: MakeProgram, run_id: str
) -> None:
    scores = [1.0, 3.0, 2.0, 3.0, 5.0, 3.0]
    programs = [make_program(score=s) for s in scores]
    make_program(status=Status.RUNTIME_ERROR)
    make_program(score=None)  # ok but unscored: not ranked
    assert [p.seq for p in archive.top(run_id, k=4)] == [4, 1, 3, 5]
    assert archive.top(run_id)[0] == programs[4]
    assert len(archive.top(run_id)) == 6
    assert archive.top(run_id, k=0) == []


def test_lineage_is_root_first(archive: Archive, make_program: MakeProgram, run_id) -> None:
    seed = make_program("a = 1\n")
    child = make_program("a = 2\n", parent_id=seed.id, generation=1)
    make_program("a = 3\n", parent_id=seed.id, generation=1)  # a sibling, not an ancestor
    grandchild = make_program("a = 4\n", parent_id=child.id, generation=2)
    assert archive.lineage(run_id, grandchild.id) == [seed, child, grandchild]
    assert archive.lineage(run_id, seed.id) == [seed]


def test_lineage_stops_at_a_missing_parent(
    archive: Archive, make_program: MakeProgram, run_id: str
) -> None:
    orphan = make_program(parent_id="gone000000000000")
    assert archive.lineage(run_id, orphan.id) == [orphan]


class TestDiff:
    def test_child_against_parent(self, archive: Archive, make_program: MakeProgram, run_id):
        parent = make_program("a = 1\nb = 2\n")
        child = make_program("a = 1\nb = 3\n", parent_id=parent.id)
        assert archive.diff(run_id, child.id) == (
            f"--- a/{parent.id}\n+++ b/{child.id}\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n"
        )

    def test_seed_against_nothing(self, archive: Archive, make_program: MakeProgram, run_id):
        seed = make_program("a = 1\n")
        expected = f"--- /dev/null\n+++ b/{seed.id}\n@@ -0,0 +1 @@\n+a = 1\n"
        assert archive.diff(run_id, seed.id) == expected

    def test_missing_final_newline_is_marked(self, archive, make_program: MakeProgram, run_id):
        parent = make_program("a = 1")
        child = make_program("a = 2", parent_id=parent.id)
        assert archive.diff(run_id, child.id).splitlines()[3:] == [
            "-a = 1",
            "\\ No newline at end of file",
            "+a = 2",
            "\\ No newline at end of file",
        ]

    def test_edit_error_has_no_diff(self, archive: Archive, run_id: str) -> None:
        failed = build_program(run_id, 0, status=Status.EDIT_ERROR)
        archive.add_program(replace(failed, id="e" * 16, source=None))
        with pytest.raises(ArchiveError, match="no source .*edit_error.*Program.edit"):
            archive.diff(run_id, "e" * 16)


def test_best_over_time(archive: Archive, make_program: MakeProgram, run_id: str) -> None:
    for score in [1.0, 0.5, 1.0, 2.0]:
        make_program(score=score)
    make_program(status=Status.TIMEOUT)
    make_program(score=7.0)
    assert archive.best_over_time(run_id) == [(0, 1.0), (3, 2.0), (5, 7.0)]
    assert archive.best_over_time("other") == []
