"""Mining what the archive stores: timelines, failure groups, the one rule that masks numbers,
and what a run's calls bought."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evoforge.archive import Archive, ArchiveError, Program, Status
from evoforge.evolve.mining import (
    bucket_width,
    call_cost,
    cost_text,
    failure_groups,
    failure_hint,
    failure_message,
    failure_reason,
    mask_numbers,
    model_failures,
    signature,
    timeline as run_timeline,
)
from evoforge.evolve.models import ModelSpec, ModelSpecError
from evoforge.evolve.run._endings import REPEATED_ERROR, Budgets
from tests.archive.conftest import build_program, new_run


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    with Archive(tmp_path / "evoforge.db") as opened:
        yield opened


@pytest.fixture
def run_id(archive: Archive) -> str:
    from evoforge.problems import Objective, Problem

    problem = Problem(
        name="toy", spec_path=Path("/toy/problem.py"), seed_source="def main():\n    return 1\n",
        objectives=(Objective("score"),),
    )  # fmt: skip
    return new_run(archive, problem)


@pytest.fixture
def make_program(archive: Archive, run_id: str) -> Callable[..., Program]:
    seqs = itertools.count()

    def make(**fields: Any) -> Program:
        program = build_program(run_id, next(seqs), **fields)
        archive.add_program(program)
        return program

    return make


def test_timeline_counts_evaluations_and_keeps_successive_bests(archive, run_id, make_program):
    specs = [  # (status, score, island)
        (Status.OK, 1.0, 0),
        (Status.EDIT_ERROR, None, 1),  # costs no evaluation
        (Status.OK, 0.5, 1),  # island 1's first best, not the run's
        (Status.RUNTIME_ERROR, None, 0),
        (Status.OK, 2.0, 1),  # the run's and island 1's
        (Status.OK, 2.0, 0),  # ties the run's best: not an improvement of the run
        (Status.SYNTAX_ERROR, None, 0),
        (Status.OK, 3.0, 0),
    ]
    for seq, (status, score, island) in enumerate(specs):
        make_program(status=status, score=score, island=island, created_at=100.0 + 7 * seq)
    timeline = run_timeline(archive, run_id)
    assert [(s.evaluation, s.seq, s.score) for s in timeline.best] == [
        (1, 0, 1.0), (4, 4, 2.0), (6, 7, 3.0),
    ]  # fmt: skip
    assert [(s.seq, s.score) for s in timeline.islands[0]] == [(0, 1.0), (5, 2.0), (7, 3.0)]
    assert [(s.seq, s.score) for s in timeline.islands[1]] == [(2, 0.5), (4, 2.0)]
    ids = dict(archive.conn.execute("SELECT seq, id FROM programs WHERE run_id = ?", (run_id,)))
    assert all(s.program_id == ids[s.seq] for s in timeline.best)
    assert timeline.best_at(3).score == 1.0 and timeline.best_at(0) is None
    # 49 s of attempts: 5 s buckets; statuses and evaluations per bucket add up
    assert timeline.bucket_s == 5.0
    assert sum(sum(b.statuses.values()) for b in timeline.buckets) == len(specs)
    assert sum(b.evaluations for b in timeline.buckets) == 6
    assert (timeline.first_at, timeline.last_at) == (100.0, 149.0)


def test_timeline_counts_knob_tuning_trials_as_evaluations(archive, run_id, make_program):
    make_program(score=1.0)
    make_program(score=2.0, evaluations=9)  # 8 tuning trials of the budget, then stored
    make_program(score=3.0)
    timeline = run_timeline(archive, run_id)
    assert [(s.evaluation, s.score) for s in timeline.best] == [(1, 1.0), (10, 2.0), (11, 3.0)]
    assert sum(b.evaluations for b in timeline.buckets) == 11
    assert archive.get_program(run_id, timeline.best[1].program_id).evaluations == 9


def test_timeline_of_an_empty_or_missing_run(archive, run_id):
    empty = run_timeline(archive, run_id)
    assert empty.best == () and empty.buckets == () and empty.first_at is None
    with pytest.raises(ArchiveError, match="no run 'nope'"):
        run_timeline(archive, "nope")


@pytest.mark.parametrize(
    ("span", "width"),
    [(0, 5), (599, 5), (600, 10), (3600, 60), (86400, 900), (864000, 10800), (8640000, 86400)],
)
def test_bucket_width_keeps_at_most_120_buckets(span, width):
    assert bucket_width(span) == width
    assert span / width < 120 or width >= 86400


def test_failure_groups_mask_numbers_and_count(archive, run_id, make_program):
    errors = [
        (Status.INCORRECT, "circles 3 and 7 overlap by 1.2e-03"),
        (Status.INCORRECT, "circles 5 and 9 overlap by 4.0e-04"),
        (Status.INCORRECT, "circle 2 sticks out of the left side of the square by 1e-2"),
        (Status.RUNTIME_ERROR, "IndexError: index 30 is out of bounds for axis 0 with size 26"),
        (Status.TIMEOUT, None),  # no error artifact: the traceback's last line
    ]
    make_program()  # an ok one, never a failure
    for status, error in errors:
        traceback = "Traceback\n  x\nTimeoutError: 5 s"
        artifacts = {"error": error} if error else {"traceback": traceback}
        make_program(status=status, artifacts=artifacts)
    groups = failure_groups(archive, run_id)
    found = {(g.status, g.signature): g.count for g in groups}
    assert found == {
        ("incorrect", "circles # and # overlap by #"): 2,
        ("incorrect", "circle # sticks out of the left side of the square by #"): 1,
        ("runtime_error", "IndexError: index # is out of bounds for axis # with size #"): 1,
        ("timeout", "TimeoutError: # s"): 1,
    }
    first = groups[0]
    assert (first.count, first.example, first.first_seq, first.last_seq) == (
        2, "circles 5 and 9 overlap by 4.0e-04", 1, 2,
    )  # fmt: skip
    assert archive.get_program(run_id, first.example_id).seq == 2
    only = failure_groups(archive, run_id, status="runtime_error")
    assert [g.status for g in only] == ["runtime_error"]
    with pytest.raises(ValueError, match="status 'ok' is not one"):
        failure_groups(archive, run_id, status="ok")


def test_failure_message_and_signature():
    assert failure_message({"error": "  a\n  b "}) == "a b"
    assert failure_message({"stderr": "x\nlast line"}) == "last line"
    assert failure_message({}) == "(no message)"
    assert signature("x1 at 0x1f: -3.5e+10 and v2") == "x1 at #: # and v2"


def test_one_rule_masks_numbers_for_every_reading_of_an_error():
    """Failure groups, failed model calls, a run's stop on a repeated model error and the
    memory's failure reasons tell errors apart by one rule: numbers masked, names kept."""
    assert mask_numbers("x1 at 0x1f: -3.5e+10, float32 and 7") == "x1 at #: #, float32 and #"
    message = "openai/m: bad request number {}: 7 tokens over"
    assert signature(message.format(3)) == signature(message.format(41))
    assert failure_reason(message.format(3)) == "openai/m: bad request number #: # tokens over"
    calls = [_call(seq, "bad_request", message.format(seq)) for seq in (1, 2, 30)]
    (group,) = model_failures(calls)
    assert (group.count, group.message) == (3, message.format(30))
    from evoforge.evolve.config import RunConfig
    from evoforge.evolve.run import Snapshot

    budgets = Budgets(RunConfig(problem="x", budget=10), Snapshot(run_id="r", budget=10), 0.0)
    for seq in range(REPEATED_ERROR):
        budgets.model_failed("openai/m", "bad_request", message.format(seq))
    ending = budgets.ending()
    assert ending is not None and f"failed {REPEATED_ERROR} calls in a row" in ending.reason


def _call(seq: int, kind: str, error: str):
    from evoforge.archive import LlmCall

    return LlmCall(
        id=seq, run_id="r", seq=seq, model="openai/m", latency_s=0.0, status="error",
        error=error, error_kind=kind,
    )  # fmt: skip


def test_the_fix_for_a_missing_key_reads_the_words_the_model_client_stores(monkeypatch):
    monkeypatch.delenv("EVOFORGE_NO_SUCH_KEY", raising=False)
    with pytest.raises(ModelSpecError) as info:
        ModelSpec("openai/m", api_key_env="EVOFORGE_NO_SUCH_KEY").read_api_key()
    hint = failure_hint("auth", str(info.value))
    assert hint.startswith("missing credentials: export EVOFORGE_NO_SUCH_KEY=<your key>")


def test_call_cost_counts_calls_per_evaluation_and_the_waste_by_reason(
    archive, run_id, make_program
):
    make_program(score=1.0)
    make_program(status=Status.DUPLICATE, score=None, cell=None)
    make_program(status=Status.EDIT_ERROR, score=None, cell=None)
    archive.bump_run(run_id, evaluations=1)
    for seq, status in ((0, "ok"), (1, "ok"), (2, "ok"), (3, "retry"), (3, "error")):
        archive.record_llm_call(run_id, seq=seq, model="m", latency_s=0.1, status=status)
    cost = call_cost(archive, run_id)
    assert (cost.calls, cost.evaluations, cost.per_evaluation) == (5, 1, 5.0)
    assert cost.wasted == {"duplicate": 1, "edit_error": 1, "syntax_error": 0, "model_error": 2}
    assert cost_text(cost.to_dict()) == (
        "calls 5 (5.00 per evaluation), wasted 4: duplicate 1, edit error 1, model error 2"
    )
    empty = call_cost(archive, "no such run")
    assert (empty.calls, empty.per_evaluation, empty.wasted_calls) == (0, None, 0)
