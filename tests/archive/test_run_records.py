"""Runs and their records: counters, island state, events, LLM calls."""

from __future__ import annotations

import re

import pytest

from evoforge.archive import Archive, ArchiveError, Event, IslandState, LlmCall, RunStatus
from evoforge.problems import Problem


class TestRuns:
    def test_create_run(self, archive: Archive, problem: Problem) -> None:
        run = archive.create_run(problem, config={"islands": 4, "model": "offline"}, seed=42)
        assert re.fullmatch(r"toy_problem-\d{8}-\d{6}-[0-9a-f]{4}", run.id)
        assert (run.problem, run.problem_path) == ("toy problem", "/problems/toy/problem.py")
        assert (run.config, run.seed) == ({"islands": 4, "model": "offline"}, 42)
        assert run.status is RunStatus.RUNNING
        assert (run.next_seq, run.evaluations, run.attempts, run.duplicates) == (0, 0, 0, 0)
        assert (run.elapsed_s, run.tokens_in, run.tokens_out, run.cost_usd) == (0.0, 0, 0, 0.0)
        assert (run.best_score, run.best_program_id, run.stop_reason) == (None, None, None)
        assert run.created_at == run.updated_at > 0
        assert archive.run(run.id) == run

    def test_generated_ids_are_unique(self, archive: Archive, problem: Problem) -> None:
        ids = {archive.create_run(problem, config={}, seed=0).id for _ in range(50)}
        assert len(ids) == 50

    def test_explicit_id_must_be_free(self, archive: Archive, problem: Problem) -> None:
        archive.create_run(problem, config={}, seed=0, run_id="mine")
        with pytest.raises(ArchiveError, match="run 'mine' already exists in .*resume"):
            archive.create_run(problem, config={}, seed=0, run_id="mine")

    def test_unknown_run(self, archive: Archive) -> None:
        with pytest.raises(ArchiveError) as error:
            archive.run("x")
        assert str(error.value) == f"no run 'x' in {archive.path}; `evoforge status` lists the runs"

    def test_runs_newest_first(self, archive: Archive, problem: Problem) -> None:
        assert archive.runs() == [] and archive.latest_run() is None
        ids = [archive.create_run(problem, config={}, seed=i, run_id=f"r{i}").id for i in range(3)]
        assert [r.id for r in archive.runs()] == ids[::-1]
        assert archive.latest_run().id == "r2"

    def test_update_run(self, archive: Archive, run_id: str) -> None:
        before = archive.run(run_id)
        archive.update_run(run_id, status="finished", stop_reason="evaluations budget reached",
                           best_score=2.5, best_program_id="ab", config={"new": True})  # fmt: skip
        run = archive.run(run_id)
        assert (run.status, run.stop_reason) == (RunStatus.FINISHED, "evaluations budget reached")
        assert (run.best_score, run.best_program_id, run.config) == (2.5, "ab", {"new": True})
        assert run.updated_at >= before.updated_at and run.created_at == before.created_at

    @pytest.mark.parametrize(
        ("fields", "error", "message"),
        [
            ({"id": "new"}, TypeError, r"update_run\(\) got unknown field\(s\) id"),
            ({"created_at": 0}, TypeError, "unknown field"),
            ({"colour": "red"}, TypeError, "unknown field.*expected some of"),
            ({"status": "paused"}, ValueError, "'paused' is not a valid RunStatus"),
        ],
        ids=["id", "created_at", "unknown", "bad-status"],
    )
    def test_update_run_refuses(self, archive: Archive, run_id, fields, error, message) -> None:
        with pytest.raises(error, match=message):
            archive.update_run(run_id, **fields)

    def test_update_or_bump_a_missing_run(self, archive: Archive) -> None:
        with pytest.raises(ArchiveError, match="no run 'ghost'"):
            archive.update_run("ghost", status="stopped")
        with pytest.raises(ArchiveError, match="no run 'ghost'"):
            archive.bump_run("ghost", attempts=1)
        with pytest.raises(ArchiveError, match="no run 'ghost'"):
            archive.reserve_seq("ghost")

    def test_bump_run(self, archive: Archive, run_id: str) -> None:
        for _ in range(3):
            archive.bump_run(run_id, attempts=1, evaluations=1, tokens_in=100, tokens_out=20,
                             cost_usd=0.25, elapsed_s=1.5)  # fmt: skip
        archive.bump_run(run_id, duplicates=2)
        run = archive.run(run_id)
        assert (run.attempts, run.evaluations, run.duplicates) == (3, 3, 2)
        assert (run.tokens_in, run.tokens_out, run.cost_usd, run.elapsed_s) == (300, 60, 0.75, 4.5)
        with pytest.raises(TypeError, match=r"bump_run\(\) got unknown field\(s\) best_score"):
            archive.bump_run(run_id, best_score=1.0)

    def test_reserve_seq(self, archive: Archive, run_id: str) -> None:
        assert [archive.reserve_seq(run_id) for _ in range(3)] == [0, 1, 2]
        assert archive.run(run_id).next_seq == 3


class TestIslandState:
    def test_defaults_when_never_written(self, archive: Archive, run_id: str) -> None:
        assert archive.island_state(run_id, 5) == IslandState(0, 0, None, 0, 0)

    def test_set_some_fields_keeps_the_others(self, archive: Archive, run_id: str) -> None:
        archive.set_island_state(run_id, 1, resets=2, best_score=1.5)
        archive.set_island_state(run_id, 1, accepted_since_migration=7)
        assert archive.island_state(run_id, 1) == IslandState(7, 0, 1.5, 2, 0)
        archive.set_island_state(run_id, 1, best_score=None)
        assert archive.island_state(run_id, 1).best_score is None
        assert archive.island_state(run_id, 0) == IslandState()

    def test_unknown_field(self, archive: Archive, run_id: str) -> None:
        with pytest.raises(TypeError, match="set_island_state.*score"):
            archive.set_island_state(run_id, 0, score=1.0)


def test_events(archive: Archive, run_id: str) -> None:
    first = archive.record_event(run_id, "run_start", data={"resumed": False})
    archive.record_event(run_id, "migration", island=2, seq=10, data={"sent": ["a"]})
    archive.record_event(run_id, "run_stop")
    events = archive.events(run_id)
    assert [e.kind for e in events] == ["run_start", "migration", "run_stop"]
    migration = archive.events(run_id, "migration")
    assert migration == [
        Event(first + 1, run_id, "migration", 10, 2, {"sent": ["a"]}, migration[0].created_at)
    ]
    assert events[2].data == {} and events[2].island is None and events[2].seq is None
    assert archive.events("other") == []


def test_llm_calls_keep_unknown_as_none(archive: Archive, run_id: str) -> None:
    archive.record_llm_call(run_id, seq=1, model="offline/mutate", latency_s=0.01, status="ok")
    archive.record_llm_call(run_id, seq=0, model="openai/gpt", latency_s=2.0, status="error",
                            prompt_tokens=900, completion_tokens=0, cost_usd=0.0,
                            error="RateLimitError", program_id="ab")  # fmt: skip
    calls = archive.llm_calls(run_id)
    assert [c.seq for c in calls] == [0, 1]
    unknown = calls[1]
    assert (unknown.prompt_tokens, unknown.completion_tokens, unknown.cost_usd) == (None,) * 3
    assert calls[0] == LlmCall(calls[0].id, run_id, 0, "openai/gpt", 2.0, "error", "ab", 900, 0,
                               0.0, "RateLimitError", calls[0].created_at)  # fmt: skip
    with pytest.raises(ValueError, match="status must be 'ok' or 'error'"):
        archive.record_llm_call(run_id, seq=2, model="m", latency_s=0.0, status="timeout")
