"""Whole runs through the controller: budgets, reproducibility, hostile candidates, failures."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from pathlib import Path

import pytest

from evoforge.archive import Archive, program_id
from evoforge.evaluators import Status
from evoforge.evaluators.tuning import tuning_unavailable
from evoforge.evolve import ConfigError, RunConfig, SeedError, resume_run, start_run
from evoforge.evolve.mining import call_cost
from evoforge.islands import IslandConfig
from evoforge.plugins import pm
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC
from tests.evolve import scripted_models
from tests.evolve.openai_server import OpenAIServer
from tests.evolve.scripted_models import rewrite


@pytest.fixture
def tiny(make_problem):
    return str(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED))


def run(config, db):
    return asyncio.run(start_run(config, db))


def ids_in_order(db, run_id):
    with Archive(db) as archive:
        return [(p.seq, p.id, p.status) for p in archive.programs(run_id)]


def test_offline_run_spends_its_budget_exactly_and_improves(tiny, tmp_path):
    db = tmp_path / "a.db"
    info, report = run(RunConfig(problem=tiny, budget=40, workers=2, seed=3), db)
    assert report.status == "finished" and "budget of 40" in report.reason
    with Archive(db) as archive:
        stored = archive.run(info.id)
        assert stored.evaluations == report.evaluations == 40
        assert stored.status == "finished"
        seed = next(archive.programs(info.id))
        assert stored.best_score > seed.score  # offline mutation really searches
        evaluated = [p for p in archive.programs(info.id) if p.status.evaluated]
        # each program's evaluations, its tuning trials included (the constants edits moved)
        assert sum(p.evaluations for p in evaluated) == 40
        if not tuning_unavailable():  # with optuna, the constants edits changed are tuned
            assert any(p.evaluations > 1 for p in evaluated)
        assert {e.kind for e in archive.events(info.id)} >= {"run_start", "run_finish"}
        calls = archive.llm_calls(info.id)
        assert calls and all(c.model == "offline/mutator" for c in calls)


def test_same_seed_one_worker_gives_identical_programs(tiny, tmp_path):
    config = RunConfig(problem=tiny, budget=25, workers=1, seed=11)
    first, one = run(config, tmp_path / "one.db")
    second, two = run(config, tmp_path / "two.db")
    a, b = ids_in_order(tmp_path / "one.db", first.id), ids_in_order(tmp_path / "two.db", second.id)
    assert a == b and one.evaluations == two.evaluations == 25
    other, _ = run(RunConfig(problem=tiny, budget=25, workers=1, seed=12), tmp_path / "3.db")
    assert ids_in_order(tmp_path / "3.db", other.id) != a


def test_resume_continues_exactly_like_an_uninterrupted_run(tiny, tmp_path):
    # A budget that ends among a candidate's tuning trials (or among the blocks of its edit
    # tried alone, or before its answer is carried to the run's best) cuts them, where the
    # uninterrupted run spends them in full: the two would part there. Without these they
    # must not part.
    untuned = {"tune_changed": 0, "split_edits": 0, "carry_to_best": False}
    whole, _ = run(
        RunConfig(problem=tiny, budget=30, workers=1, seed=5, search=untuned), tmp_path / "w.db"
    )
    part, report = run(
        RunConfig(problem=tiny, budget=12, workers=1, seed=5, search=untuned), tmp_path / "p.db"
    )
    assert report.evaluations == 12
    _, resumed = asyncio.run(resume_run(part.id, tmp_path / "p.db", budget=30))
    assert resumed.status == "finished" and resumed.evaluations == 30
    assert ids_in_order(tmp_path / "p.db", part.id) == ids_in_order(tmp_path / "w.db", whole.id)
    with Archive(tmp_path / "p.db") as archive:
        assert [e.kind for e in archive.events(part.id)].count("run_resume") == 1


def test_resume_of_a_run_whose_problem_moved_says_so(tiny, tmp_path):
    info, _ = run(RunConfig(problem=tiny, budget=3, workers=1), tmp_path / "mv.db")
    os.rename(tiny, tiny + "-moved")
    with pytest.raises(ConfigError, match="no longer exists"):
        asyncio.run(resume_run(info.id, tmp_path / "mv.db", budget=5))


def test_resume_after_the_problem_changed_warns_and_marks_the_point(tiny, tmp_path, caplog):
    info, _ = run(RunConfig(problem=tiny, budget=3, workers=1), tmp_path / "pc.db")
    asyncio.run(resume_run(info.id, tmp_path / "pc.db", budget=4))  # unchanged: no event
    spec = Path(tiny) / "problem.py"
    spec.write_text(spec.read_text().replace("(b - 2.0)", "(b - 2.5)"))
    asyncio.run(resume_run(info.id, tmp_path / "pc.db", budget=6))
    with Archive(tmp_path / "pc.db") as archive:
        kinds = [e.kind for e in archive.events(info.id)]
    assert kinds.count("problem_changed") == 1
    assert kinds.index("problem_changed") > kinds.index("run_resume")
    assert "problem spec or seed changed" in caplog.text


def test_resume_of_a_spent_run_says_how_to_continue(tiny, tmp_path):
    info, _ = run(RunConfig(problem=tiny, budget=3, workers=1), tmp_path / "s.db")
    with pytest.raises(ConfigError, match="--budget"):
        asyncio.run(resume_run(info.id, tmp_path / "s.db"))


HOSTILE = {
    "loop": ("def main():\n    while True:\n        pass\n", Status.TIMEOUT),
    "memory": (
        "def main():\n    block = bytearray(50 * 10**9)\n    return [len(block), 0]\n",
        Status.MEMORY_LIMIT,
    ),
    "exit": ("import os\n\ndef main():\n    os._exit(3)\n", Status.CRASHED),
    "raise": ("def main():\n    raise ValueError('nope')\n", Status.RUNTIME_ERROR),
    "wrong": ("def main():\n    return 'not a pair'\n", Status.INCORRECT),
    "fine": ("def main():\n    return [1.0, 2.0]\n", Status.OK),
}


def test_hostile_candidates_are_recorded_and_the_run_continues(make_problem, tmp_path, scripted):
    folder = make_problem(TRIVIAL_SPEC.replace("timeout_s = 5", "timeout_s = 1"), TRIVIAL_SEED)
    scripted["hostile"] = [rewrite(body) for body, _ in HOSTILE.values()]
    config = RunConfig(
        problem=str(folder), budget=1 + len(HOSTILE), workers=1, model="scripted/hostile"
    )
    info, report = run(config, tmp_path / "h.db")
    assert report.status == "finished"
    with Archive(tmp_path / "h.db") as archive:
        statuses = [p.status for p in archive.programs(info.id)][1:]
    assert statuses == [status for _, status in HOSTILE.values()]


def test_unusable_answers_are_stored_with_reasons_and_cost_no_evaluation(tiny, tmp_path, scripted):
    scripted["bad"] = [
        "I would rather not.",  # no edit at all
        "<<<<<<< SEARCH\nnot in the program\n=======\nx = 1\n>>>>>>> REPLACE\n",
        rewrite("def main(:\n    return [1, 2]"),  # syntax error
        rewrite("def main():\n    return [0.9, 2.0]"),
        rewrite("def main():\n    return [0.9, 2.0]"),  # the same child again: a duplicate
        rewrite("def main():\n    return [0.9,  2.0]  # again"),  # its syntax-tree twin
        rewrite("def main():\n    return [1.0, 2.0]"),
    ]
    info, report = run(
        RunConfig(problem=tiny, budget=3, workers=1, model="scripted/bad"), tmp_path / "b.db"
    )
    with Archive(tmp_path / "b.db") as archive:
        programs = list(archive.programs(info.id))
        stored = archive.run(info.id)
    assert [p.status for p in programs[1:4]] == [
        Status.EDIT_ERROR,
        Status.EDIT_ERROR,
        Status.SYNTAX_ERROR,
    ]
    assert programs[1].source is None and programs[1].edit == "I would rather not."
    assert "not found" in programs[2].artifacts["error"].lower()
    assert "line 3, column 10" in programs[3].artifacts["error"]
    # the repeated child is stored as a duplicate attempt without a source
    assert [p.status for p in programs[4:]] == [
        Status.OK,
        Status.DUPLICATE,
        Status.DUPLICATE,
        Status.OK,
    ]
    assert programs[5].source is None
    assert programs[5].artifacts["duplicate_of"] == programs[4].id
    assert programs[6].artifacts["duplicate_of"] == programs[4].id  # the equivalent
    assert stored.evaluations == 3 and report.status == "finished"
    # every duplicate is counted, the syntax-tree twin too, not only the exact copy
    assert stored.duplicates == 2 and stored.attempts == 8
    with Archive(tmp_path / "b.db") as archive:
        cost = call_cost(archive, info.id)
    assert (cost.calls, cost.evaluations, cost.per_evaluation) == (7, 3, 7 / 3)
    assert cost.wasted == {"duplicate": 2, "edit_error": 2, "syntax_error": 1, "model_error": 0}


def test_an_empty_answer_is_stored_as_a_failed_attempt_with_its_reason(tiny, tmp_path, monkeypatch):
    answers = iter(["", rewrite("def main():\n    return [1.0, 2.0]")])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with OpenAIServer(answer=lambda body: next(answers)) as server:
        config = RunConfig(
            problem=tiny, budget=2, workers=1, model="openai/gpt-4o-mini", api_base=server.url
        )
        info, report = run(config, tmp_path / "e.db")
    assert report.status == "finished"
    with Archive(tmp_path / "e.db") as archive:
        programs = list(archive.programs(info.id))
        calls = archive.llm_calls(info.id)
    assert [p.status for p in programs] == [Status.OK, Status.EDIT_ERROR, Status.OK]
    assert programs[1].edit == "" and "answer was empty" in programs[1].artifacts["error"]
    assert programs[1].model == "openai/gpt-4o-mini"
    assert [c.program_id for c in calls] == [programs[1].id, programs[2].id]


def test_a_reasoning_model_cut_off_while_thinking_is_stored_with_the_fix(
    tiny, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with OpenAIServer(faults=["thinking"]) as server:
        config = RunConfig(
            problem=tiny, budget=2, workers=1, model="openai/gpt-4o-mini", api_base=server.url
        )
        info, _ = run(config, tmp_path / "t.db")
    with Archive(tmp_path / "t.db") as archive:
        failed = next(p for p in archive.programs(info.id) if p.status == Status.EDIT_ERROR)
    error = failed.artifacts["error"]
    assert error.startswith("the model's answer was empty: only 1160 characters of reasoning")
    assert "while it was still thinking; raise --max-tokens" in error


def test_a_model_that_never_helps_fails_the_run_with_a_reason(tiny, tmp_path, scripted):
    scripted["useless"] = ["no code here"]
    config = RunConfig(
        problem=tiny, budget=10, workers=1, model="scripted/useless", max_failed_streak=5
    )
    info, report = run(config, tmp_path / "u.db")
    assert report.status == "failed" and "last 5 attempts" in report.reason
    with Archive(tmp_path / "u.db") as archive:
        assert archive.run(info.id).status == "failed"
        assert archive.count_programs(info.id, Status.EDIT_ERROR) == 5


def test_unreachable_model_is_recorded_per_attempt(tiny, tmp_path, monkeypatch):
    config = RunConfig.from_dict(
        dict(
            problem=tiny,
            budget=5,
            workers=1,
            model="openai/gpt-4o-mini",
            api_base="http://127.0.0.1:9/v1",  # nothing listens on the discard port
            max_failed_streak=2,
            retry={"max_attempts": 3, "base_s": 0.01, "max_s": 0.02},
        )
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    info, report = run(config, tmp_path / "m.db")
    assert report.status == "failed"
    with Archive(tmp_path / "m.db") as archive:
        calls = archive.llm_calls(info.id)
    # two calls, each tried three times: two retried attempts and the one that gave up
    assert [(c.seq, c.attempt, c.status) for c in calls] == [
        (1, 1, "retry"), (1, 2, "retry"), (1, 3, "error"),
        (2, 1, "retry"), (2, 2, "retry"), (2, 3, "error"),
    ]  # fmt: skip
    assert [c.error_kind for c in calls] == ["connection"] * 6
    assert all(c.waited_s > 0 for c in calls if c.status == "retry")


def test_missing_key_is_an_auth_failure_and_not_retried(tiny, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = RunConfig(
        problem=tiny,
        budget=5,
        workers=1,
        model="openai/gpt-4o-mini",
        api_base="http://127.0.0.1:9/v1",
        max_failed_streak=2,
    )
    info, report = run(config, tmp_path / "m.db")
    assert report.status == "failed"
    with Archive(tmp_path / "m.db") as archive:
        calls = archive.llm_calls(info.id)
    # Not retried, and not tried again either: no model can be reached, so the run ends at
    # once, saying why (the variable) and what to do.
    assert [(c.seq, c.attempt, c.status, c.error_kind) for c in calls] == [
        (1, 1, "error", "auth"),
    ]
    assert "OPENAI_API_KEY" in calls[0].error
    assert "no model can be reached" in report.reason and "OPENAI_API_KEY" in report.reason
    assert "--model offline/mutator" in report.reason


def test_wall_time_budget_stops_the_run(tiny, tmp_path):
    config = RunConfig(problem=tiny, budget=100_000, workers=1, max_wall_s=1.5)
    _, report = run(config, tmp_path / "t.db")
    assert report.status == "finished" and "wall-time" in report.reason
    assert 1 < report.evaluations < 100_000


def test_failing_seed_stops_with_a_clear_error(make_problem, tmp_path):
    folder = make_problem(TRIVIAL_SPEC, TRIVIAL_SEED.replace("return [a, b]", "return 'x'"))
    with pytest.raises(SeedError, match="seed program of tiny evaluated to 'incorrect'"):
        run(RunConfig(problem=str(folder), budget=5, workers=1), tmp_path / "f.db")


def test_migrations_and_resets_happen_in_a_run(tiny, tmp_path):
    islands = IslandConfig(count=2, migration_interval=2, stagnation=4)
    info, _ = run(RunConfig(problem=tiny, budget=40, workers=1, islands=islands), tmp_path / "i.db")
    with Archive(tmp_path / "i.db") as archive:
        kinds = [e.kind for e in archive.events(info.id)]
    assert "migration" in kinds


def test_archive_file_is_sound_after_a_run(tiny, tmp_path):
    run(RunConfig(problem=tiny, budget=10, workers=2), tmp_path / "ok.db")
    with sqlite3.connect(tmp_path / "ok.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_wall_time_budget_is_kept_while_a_model_call_hangs(tiny, tmp_path, scripted):
    """The budget is checked on a timer, not only when a candidate completes."""
    scripted["slow"] = ["sleep:120"]
    config = RunConfig(
        problem=tiny, budget=10, workers=1, model="scripted/slow", max_wall_s=8.0
    )  # longer than start-up (seed, litellm import)
    started = time.monotonic()
    info, report = run(config, tmp_path / "slow.db")
    assert report.status == "finished" and "wall-time" in report.reason
    assert time.monotonic() - started < 40
    with Archive(tmp_path / "slow.db") as archive:
        assert archive.run(info.id).next_seq == 1  # the stalled candidate is redone on resume


# --- poison candidates: every value ends as a status, and no resume replays one forever -----

POISON_SPEC = """
    name = "poisoned"
    objectives = {"score": "maximize"}
    descriptors = {"a": (-10.0, 10.0, 4)}
    preload = []
    timeout_s = 5
    memory_mb = 512

    def evaluate(output):
        score, echo = output
        return {"score": score, "a": 0.0, "echo": echo}
"""
POISON_SEED = """
    # EVOLVE-BLOCK-START
    def main():
        return [0.5, 0]
    # EVOLVE-BLOCK-END
"""
POISONS = {
    "huge-int-score": "def main():\n    return [10**400, 0]",
    "deep-echo": (
        "def main():\n    x = []\n    for _ in range(970):\n        x = [x]\n    return [1.0, x]"
    ),
    "huge-int-echo": "def main():\n    return [1.0, 10**5000]",
    "nan-score": "def main():\n    return [float('nan'), 0]",
}


@pytest.mark.parametrize("poison", POISONS)
def test_a_poison_first_child_still_lets_the_run_reach_its_budget(
    make_problem, tmp_path, scripted, poison
):
    folder = make_problem(POISON_SPEC, POISON_SEED)
    scripted["poison"] = [rewrite(POISONS[poison])] + [
        rewrite(f"def main():\n    return [{i / 10}, 0]") for i in range(1, 12)
    ]
    config = RunConfig(problem=str(folder), budget=6, workers=1, model="scripted/poison")
    info, report = run(config, tmp_path / "p.db")
    assert report.status == "finished" and report.evaluations == 6, report.reason
    with Archive(tmp_path / "p.db") as archive:
        programs = list(archive.programs(info.id))
    assert programs[1].status in (Status.INCORRECT, Status.OK, Status.RUNTIME_ERROR)
    assert all(p.status is Status.OK for p in programs[2:])


def _counting_plugin(log: Path):
    """An evaluator plugin that logs each source it evaluates and raises (an engine failure,
    not a candidate's status) for a source containing POISON: the worst kind of candidate."""
    from evoforge.evaluators import PythonEvaluator
    from evoforge.plugins import hookimpl

    class Counting(PythonEvaluator):
        name = "counting-python"

        async def evaluate(self, source):
            with open(log, "a") as f:
                f.write(program_id(source) + "\n")
            if "POISON" in source:
                raise RuntimeError("an evaluator bug this candidate triggers")
            return await super().evaluate(source)

    class Plugin:
        @hookimpl
        def register_evaluators(self, register):
            register(Counting)

    return Plugin()


def test_resume_never_replays_a_poison_candidate_forever(make_problem, tmp_path, scripted):
    log = tmp_path / "evaluated.log"
    plugin = _counting_plugin(log)
    pm.register(plugin, "counting-evaluator")
    try:
        spec = TRIVIAL_SPEC.replace(
            'name = "tiny"', 'name = "tiny"\n    evaluator = "counting-python"'
        )
        folder = make_problem(spec, TRIVIAL_SEED)
        scripted["killer"] = [
            rewrite("def main():\n    # POISON\n    return [1.0, 2.0]"),
            *(rewrite(f"def main():\n    return [1.0, {i / 7}]") for i in range(20)),
        ]
        db = tmp_path / "k.db"
        config = RunConfig(problem=str(folder), budget=4, workers=1, model="scripted/killer")
        with pytest.raises(RuntimeError, match="evaluator bug"):
            run(config, db)  # the engine fails on it: the session ends failed
        with Archive(db) as archive:
            run_id = archive.latest_run().id
        with pytest.raises(RuntimeError, match="evaluator bug"):
            scripted_models._cursors.clear()
            asyncio.run(resume_run(run_id, db))  # once more: it could be the host's fault
        scripted_models._cursors.clear()
        _, report = asyncio.run(resume_run(run_id, db))  # the third time it is not evaluated
        assert report.status == "finished" and report.evaluations == 4
        with Archive(db) as archive:
            programs = list(archive.programs(run_id))
            assert archive.unfinished_evaluations(run_id) == {}
        poisoned = programs[1]
        assert poisoned.status is Status.CRASHED
        assert "started 2 times before and never finished" in poisoned.artifacts["error"]
        evaluated = log.read_text().split()
        assert evaluated.count(poisoned.id) == 2
        # Nothing recorded was evaluated again by a resume.
        recorded = [p.id for p in programs if p.id != poisoned.id]
        assert all(evaluated.count(pid) == 1 for pid in recorded), evaluated
    finally:
        pm.unregister(name="counting-evaluator")


def test_a_resumed_run_never_reevaluates_a_recorded_candidate(make_problem, tmp_path):
    log = tmp_path / "evaluated.log"
    plugin = _counting_plugin(log)
    pm.register(plugin, "counting-evaluator")
    try:
        spec = TRIVIAL_SPEC.replace(
            'name = "tiny"', 'name = "tiny"\n    evaluator = "counting-python"'
        )
        folder = make_problem(spec, TRIVIAL_SEED)
        db = tmp_path / "r.db"
        # each evaluation of the program it records: no tuning trials, no edit blocks tried
        # alone (those evaluate programs the run does not store)
        whole = {"tune_changed": 0, "split_edits": 0}
        config = RunConfig(problem=str(folder), budget=8, workers=2, seed=3, search=whole)
        info, _ = run(config, db)
        asyncio.run(resume_run(info.id, db, budget=16))
        asyncio.run(resume_run(info.id, db, budget=20))
        with Archive(db) as archive:
            recorded = [p.id for p in archive.programs(info.id) if p.status.evaluated]
            assert archive.run(info.id).evaluations == 20
        evaluated = log.read_text().split()
        assert sorted(set(evaluated)) == sorted(set(recorded))
        assert all(evaluated.count(pid) == 1 for pid in recorded)
    finally:
        pm.unregister(name="counting-evaluator")


def test_the_start_event_records_the_candidates_isolation(tiny, tmp_path):
    info, _ = run(RunConfig(problem=tiny, budget=2, workers=1), tmp_path / "iso.db")
    with Archive(tmp_path / "iso.db") as archive:
        start = next(e for e in archive.events(info.id) if e.kind == "run_start")
    isolation = start.data["isolation"]
    for key in ("user", "filesystem", "network", "pid namespace", "ipc namespace", "memory"):
        assert isolation.get(key), (key, isolation)
    if os.geteuid() == 0:
        assert not isolation["user"].startswith("uid 0"), isolation["user"]
