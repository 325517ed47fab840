"""Optimization memory: its content, its refreshes, and that it depends on the archive only."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from evoforge.archive import Archive
from evoforge.evaluators import Status
from evoforge.evolve import ConfigError
from evoforge.evolve.mining import failure_reason
from evoforge.evolve.prompts import _memory
from evoforge.evolve.prompts._memory import OptimizationMemory
from evoforge.problems import Direction, Objective
from tests.evolve.run_history import PROBLEM, SEED, History, variant

INDEX_ERROR = "IndexError: index {} is out of bounds for axis 0 with size {}"


@pytest.fixture
def history(tmp_path: Path):
    with Archive(tmp_path / "a.db") as archive:
        yield History(archive)


def grow(history: History) -> None:
    """Seed 1.0; a diff to 3.0 (+2); a rewrite to 1.5 (+0.5); a worse child; failures:
    7 attempts, 6 evaluations (the edit error costs none)."""
    seed = history.add(SEED, score=1.0)
    history.add(SEED.replace("A = 1.0", "A = 3.0"), parent=seed, score=3.0, cell=1)
    history.add(variant(1), parent=seed, score=1.5, cell=2, edit_kind="rewrite")
    history.add(variant(2), parent=seed, score=0.5, cell=2)
    history.add(
        None, parent=seed, status=Status.EDIT_ERROR,
        artifacts={"error": "block 1: its SEARCH text was not found (first line: 'A = 2'); copy"},
    )  # fmt: skip
    for n, (i, size) in enumerate(((26, 26), (30, 26))):
        history.add(
            variant(10 + n), parent=seed, status=Status.RUNTIME_ERROR,
            artifacts={"error": INDEX_ERROR.format(i, size), "traceback": "..."},
        )  # fmt: skip


def improve(history: History, n: int, score: float):
    seed = next(history.archive.programs(history.run_id))
    return history.add(variant(500 + n), parent=seed, score=score, cell=3)


def add_timeouts(history: History) -> None:
    """2,100 timed-out children of the seed: more than one page of attempts."""
    seed = next(history.archive.programs(history.run_id))
    for n in range(2100):
        history.add(
            variant(100 + n), parent=seed, status=Status.TIMEOUT,
            artifacts={"error": f"timed out after {n} s"},
        )  # fmt: skip


def test_digest_is_empty_before_the_first_refresh(history: History) -> None:
    grow(history)
    memory = OptimizationMemory(refresh_every=6)
    assert memory.digest(history.archive, history.run_id, PROBLEM, 0) == ""
    assert memory.digest(history.archive, history.run_id, PROBLEM, 5) == ""
    assert memory.digest(history.archive, history.run_id, PROBLEM, 6) != ""


def test_digest_reports_improvements_kinds_and_failure_reasons(history: History) -> None:
    grow(history)
    text = OptimizationMemory(refresh_every=6).digest(history.archive, history.run_id, PROBLEM, 6)
    lines = text.split("\n")
    assert lines[0] == "After 6 evaluations (7 attempts):"
    assert lines[1] == (
        "By edit kind: diff: 1 improved on their parent, 2 ok, 5 attempts; "
        "rewrite: 1 improved on their parent, 1 ok, 1 attempts"
    )
    assert "By model" not in text  # one model says nothing a kind does not
    failures = text.split("Most common failures:\n", 1)[1].split("\nLargest", 1)[0].split("\n")
    assert failures == [
        "- runtime_error x2: IndexError: index # is out of bounds for axis # with size #",
        "- edit_error x1: block #: its SEARCH text was not found (first line: '…')",
    ]
    best = text.split("Largest improvements of score (maximize) over the parent:\n", 1)[1]
    assert best.startswith("1. seq 1 (diff, offline/mutator): score 1 -> 3\n```diff\n")
    assert "-A = 1.0\n+A = 3.0\n" in best
    assert "2. seq 2 (rewrite, offline/mutator): score 1 -> 1.5" in best
    assert "seq 3" not in best  # worse than its parent


def test_models_are_compared_when_there_are_several(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    history.add(variant(1), parent=seed, score=2.0, model="openai/gpt-4o")
    history.add(variant(2), parent=seed, score=0.5, model="offline/mutator")
    text = OptimizationMemory(refresh_every=1).digest(history.archive, history.run_id, PROBLEM, 3)
    assert (
        "By model: openai/gpt-4o: 1 improved on their parent, 1 ok, 1 attempts; "
        "offline/mutator: 0 improved on their parent, 1 ok, 1 attempts"
    ) in text


def test_digest_is_cached_between_refreshes(history: History) -> None:
    grow(history)
    memory = OptimizationMemory(refresh_every=2)
    first = memory.digest(history.archive, history.run_id, PROBLEM, 6)
    improve(history, 1, 10.0)
    assert memory.digest(history.archive, history.run_id, PROBLEM, 7) == first
    improve(history, 2, 20.0)
    refreshed = memory.digest(history.archive, history.run_id, PROBLEM, 8)
    assert refreshed.startswith("After 8 evaluations (9 attempts):")
    assert "1. seq 8 (diff, offline/mutator): score 1 -> 20" in refreshed
    assert "2. seq 7 (diff, offline/mutator): score 1 -> 10" in refreshed


def test_a_tuned_childs_trials_count_as_the_run_counts_them(history: History) -> None:
    """A child tuned with 6 trials made 7 evaluations: the refresh at 8 evaluations is reached
    with the next child, as the run's own count says, and its checkpoint is saved."""
    seed = history.add(SEED, score=1.0)
    history.add(SEED.replace("A = 1.0", "A = 1.5"), parent=seed, score=2.0, evaluations=7)
    memory = OptimizationMemory(refresh_every=4)
    digest = memory.digest(history.archive, history.run_id, PROBLEM, 8)
    assert digest.startswith("After 8 evaluations (2 attempts):")
    assert history.archive.memory_state(history.run_id, 4) is not None


def test_same_archive_same_digest_for_a_fresh_or_a_following_memory(history: History) -> None:
    following = OptimizationMemory(refresh_every=2)
    grow(history)
    following.digest(history.archive, history.run_id, PROBLEM, 2)
    add_timeouts(history)
    incremental = following.digest(history.archive, history.run_id, PROBLEM, 2106)
    history.archive.conn.execute("DELETE FROM memory_states")  # fresh: no checkpoint either
    fresh = OptimizationMemory(refresh_every=2).digest(
        history.archive, history.run_id, PROBLEM, 2106
    )
    assert incremental == fresh
    assert "(2107 attempts)" in fresh and "- timeout x2100: timed out after # s" in fresh


def test_a_memory_rebuilt_later_writes_what_the_run_saw_at_its_last_refresh(
    history: History,
) -> None:
    """Resume replays exactly: the digest of refresh k covers the attempts up to the one that
    made k * refresh_every evaluations, not what came after it."""
    grow(history)
    improve(history, 1, 5.0)
    improve(history, 2, 6.0)  # 8 evaluations
    during_run = OptimizationMemory(refresh_every=4).digest(
        history.archive, history.run_id, PROBLEM, 8
    )
    history.add(None, parent=None, status=Status.EDIT_ERROR)  # after the refresh
    improve(history, 3, 50.0)  # 9 evaluations
    resumed = OptimizationMemory(refresh_every=4).digest(
        history.archive, history.run_id, PROBLEM, 9
    )
    assert resumed == during_run
    assert resumed.startswith("After 8 evaluations (9 attempts):") and "-> 50" not in resumed


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ``after_rowid`` of each page of attempts the memory reads from now on."""
    calls: list[int] = []
    read = _memory.attempt_outcomes

    def recording(archive, run_id, *, after_rowid, limit):
        calls.append(after_rowid)
        return read(archive, run_id, after_rowid=after_rowid, limit=limit)

    monkeypatch.setattr(_memory, "attempt_outcomes", recording)
    return calls


def _long_history(history: History) -> None:
    grow(history)  # 6 evaluations
    OptimizationMemory(refresh_every=2).digest(history.archive, history.run_id, PROBLEM, 6)
    add_timeouts(history)


def test_a_new_session_reads_only_what_came_after_the_checkpoint(
    history: History, monkeypatch: pytest.MonkeyPatch
) -> None:
    _long_history(history)
    archive, run = history.archive, history.run_id
    epoch, _ = archive.memory_state(run, 2)
    assert epoch == 3  # the first session's refresh at 6 evaluations
    (last_read,) = archive.conn.execute(  # the 7th attempt made the 6th evaluation
        "SELECT rowid FROM programs WHERE run_id = ? ORDER BY rowid LIMIT 1 OFFSET 6", (run,)
    ).fetchone()
    reads = _reads(monkeypatch)
    resumed = OptimizationMemory(refresh_every=2).digest(archive, run, PROBLEM, 2106)
    assert reads == [last_read, last_read + 2048]  # from the checkpoint on: 2,100 rows
    assert archive.memory_state(run, 2)[0] == 1053  # the new refresh is the new checkpoint
    archive.conn.execute("DELETE FROM memory_states")
    reads.clear()
    scratch = OptimizationMemory(refresh_every=2).digest(archive, run, PROBLEM, 2106)
    assert reads[0] == 0 and len(reads) == 2
    assert resumed == scratch and "(2107 attempts)" in scratch


@pytest.mark.parametrize(
    "edit",
    [
        "state_json = 'not json'",
        'state_json = \'{"version": 2, "kinds": 3}\'',
        "state_json = replace(state_json, '\"version\": 2', '\"version\": 99')",
        'state_json = replace(state_json, \'"best": [\', \'"best": [["x"], \')',
        "epoch = 5000",  # a checkpoint past the refresh asked for is not used
    ],
)
def test_a_checkpoint_that_cannot_be_used_is_rebuilt_from_the_programs(
    history: History, edit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _long_history(history)
    archive, run = history.archive, history.run_id
    expected = OptimizationMemory(refresh_every=2).digest(archive, run, PROBLEM, 2106)
    archive.conn.execute(f"UPDATE memory_states SET {edit}")
    reads = _reads(monkeypatch)
    assert OptimizationMemory(refresh_every=2).digest(archive, run, PROBLEM, 2106) == expected
    assert reads[0] == 0  # from the first attempt


def test_a_reader_uses_checkpoints_but_writes_none(history: History, tmp_path: Path) -> None:
    _long_history(history)
    expected = OptimizationMemory(refresh_every=2).digest(
        history.archive, history.run_id, PROBLEM, 2106
    )
    before = history.archive.memory_state(history.run_id, 2)
    with Archive(tmp_path / "a.db", read_only=True) as reader:
        memory = OptimizationMemory(refresh_every=2)
        assert memory.digest(reader, history.run_id, PROBLEM, 2106) == expected
        assert OptimizationMemory(refresh_every=3).digest(reader, history.run_id, PROBLEM, 2106)
    assert history.archive.memory_state(history.run_id, 2) == before
    assert history.archive.memory_state(history.run_id, 3) is None


def test_digest_stays_within_max_chars(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    for n in range(4):
        body = "".join(f"C{n}_{i} = {i}\n" for i in range(300))
        history.add(SEED.replace("B = 2.0\n", f"B = 2.0\n{body}"), parent=seed, score=2.0 + n)
    for limit in (200, 700, 2000):
        memory = OptimizationMemory(refresh_every=1, max_chars=limit)
        text = memory.digest(history.archive, history.run_id, PROBLEM, 5)
        assert len(text) <= limit
    assert "… (diff cut)" in text and "```diff" in text


def test_minimised_objectives_are_shown_as_their_values(history: History) -> None:
    problem = dataclasses.replace(PROBLEM, objectives=(Objective("time", Direction.MINIMIZE),))
    seed = history.add(SEED, score=-5.0)  # scores are oriented: time 5 s
    history.add(variant(1), parent=seed, score=-2.0)
    text = OptimizationMemory(refresh_every=1).digest(history.archive, history.run_id, problem, 2)
    assert "Largest improvements of time (minimize)" in text
    assert "time 5 -> 2" in text


def test_another_run_starts_over(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.db") as archive:
        one, two = History(archive, run_id="one"), History(archive, run_id="two")
        grow(one)
        two.add(SEED, score=1.0)
        memory = OptimizationMemory(refresh_every=1)
        assert "(7 attempts)" in memory.digest(archive, "one", PROBLEM, 6)
        assert "(1 attempts)" in memory.digest(archive, "two", PROBLEM, 1)


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (None, "no error message"),
        ("  \n", "no error message"),
        ("ValueError: bad 3.5e-07 at 12\nTraceback ...", "ValueError: bad # at #"),
        ("circles 3 and 7 overlap by 0.01; shrink them", "circles # and # overlap by #"),
        ('KeyError: "radius"', "KeyError: '…'"),
        ("x" * 500, "x" * 100),
    ],
)
def test_failure_reasons_group_the_same_mistake(error: str | None, reason: str) -> None:
    assert failure_reason(error) == reason


def test_memory_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="refresh_every = 0"):
        OptimizationMemory(refresh_every=0)
    with pytest.raises(ConfigError, match="max_chars = 50: expected at least 200"):
        OptimizationMemory(max_chars=50)
