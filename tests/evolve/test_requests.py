"""No request goes out identical to one already answered: request keys, the ledger, and a run
against a deterministic model server."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import textwrap
from collections import Counter

import pytest
from hypothesis import given, strategies as st

import evoforge
from evoforge.archive import Archive, Program
from evoforge.evaluators import Status
from evoforge.evolve import resume_run
from evoforge.evolve.models import ModelSpec
from evoforge.evolve.prompts import FOCUS, FailedAttempt, Mode, PromptContext
from evoforge.evolve.search._requests import RequestLedger, request_key
from tests.evolve.run_history import SEED
from tests.evolve.sloppy_server import SloppyServer


def program(seq: int, source: str | None = SEED, **fields) -> Program:
    fields.setdefault("status", Status.OK)
    return Program("r", f"p{seq:015d}", seq, source, None, 0, 1, **fields)


PARENT, OTHER, BEST = program(1), program(2), program(3)
FAILED = FailedAttempt(program(4, status=Status.RUNTIME_ERROR))
CONTEXT = PromptContext(
    Mode.DIFF, PARENT, inspirations=(OTHER,), top_programs=(BEST,), lineage_failures=(FAILED,)
)
REMOTE = ModelSpec("openai/greedy")


def key(context=CONTEXT, spec=REMOTE, templates=None, *, seed=1, temperature=0.7):
    return request_key(
        context, spec, templates or {}, temperature=temperature, max_tokens=1000, seed=seed
    )


@pytest.mark.parametrize(
    "change",
    [
        {"parent": OTHER},
        {"mode": Mode.REWRITE},
        {"inspirations": ()},
        {"top_programs": (OTHER,)},
        {"lineage_failures": ()},
        {"memory_digest": "After 10 evaluations: ..."},
        {"editable_note": "Editable: lines 3-9."},
    ],
    ids=lambda change: next(iter(change)),
)
def test_what_the_prompt_is_made_from_is_in_the_key(change) -> None:
    assert key(dataclasses.replace(CONTEXT, **change)) != key()
    assert key(dataclasses.replace(CONTEXT)) == key()  # equal inputs, equal key


def test_the_model_its_parameters_and_the_templates_are_in_the_key() -> None:
    assert key(spec=ModelSpec("openai/other")) != key()
    assert key(spec=ModelSpec("openai/greedy", api_base="http://h/v1")) != key()
    assert key(temperature=0.0) != key()
    assert key(templates={"task_diff": f"Improve it.\n\n{FOCUS}tune constants"}) != key()


@given(st.integers(0, 2**31 - 2), st.integers(0, 2**31 - 2))
def test_the_seed_is_in_the_key_only_where_the_provider_answers_by_it(one, two) -> None:
    # a remote model may ignore the seed (a greedy server does): the same messages repeat
    assert key(seed=one) == key(seed=two)
    offline = ModelSpec("offline/mutator")  # draws its answer from the seed
    assert (key(spec=offline, seed=one) == key(spec=offline, seed=two)) == (one == two)


def test_the_ledger_sees_keys_in_flight_and_answered_and_forgets_failed_calls() -> None:
    ledger = RequestLedger()
    a, b = key(), key(seed=1, temperature=0.1)
    assert not ledger.seen(a)
    ledger.begin(a)
    ledger.begin(b)
    assert ledger.seen(a) and ledger.seen(b)
    ledger.answered(a)
    ledger.abandon(b)  # the call failed: the model said nothing, it may be asked again
    assert ledger.seen(a) and not ledger.seen(b)


def test_the_ledger_forgets_the_oldest_answers_past_its_bound() -> None:
    ledger = RequestLedger(max_answered=2)
    keys = [key(temperature=t) for t in (0.1, 0.2, 0.3)]
    for k in keys:
        ledger.begin(k)
        ledger.answered(k)
    assert [ledger.seen(k) for k in keys] == [False, True, True]


# --- a run against a deterministic model -------------------------------------------------------

PROBLEM = """
name = "weights_fit"
objectives = {"score": "maximize"}
evaluator = "python"
timeout_s = 5
memory_mb = 512
preload = []
seed_file = "seed.py"

def evaluate(output):
    values = [float(v) for v in output]
    return {"correct": True, "score": -sum((v - t) ** 2 for v, t in zip(values, (3.7, -1.2)))}
"""

PROGRAM = """
# EVOLVE-BLOCK-START
def weights():
    a = 1.0  # the first weight
    b = 2.0  # the second weight
    for step in range(3):
        if a < 4.0:
            a = a * 1.1 + 0.2
    return [a, b]
# EVOLVE-BLOCK-END


def main():
    return weights()
"""


@pytest.fixture
def problem_dir(tmp_path):
    folder = tmp_path / "weights_fit"
    folder.mkdir()
    (folder / "problem.py").write_text(textwrap.dedent(PROBLEM))
    (folder / "seed.py").write_text(textwrap.dedent(PROGRAM).lstrip())
    return folder


def sent_twice(problem_dir, tmp_path, monkeypatch, **search) -> int:
    """Requests a run sent whose messages an earlier request of the run had already sent."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with SloppyServer() as server:
        evoforge.run(
            problem_dir,
            db=tmp_path / f"{len(search)}.db",
            budget=24,
            seed=1,
            model="openai/sloppy",
            api_base=server.url,
            workers=2,
            llm_concurrency=4,  # four requests in flight: the first ones all see the seed alone
            tune=False,
            search=search,
        )
        sent = [json.dumps(r.body["messages"], sort_keys=True) for r in server.chat_requests()]
    messages = Counter(sent)
    return sum(messages.values()) - len(messages)


@pytest.mark.slow
def test_no_request_goes_out_identical_to_one_already_sent(problem_dir, tmp_path, monkeypatch):
    assert sent_twice(problem_dir, tmp_path, monkeypatch) == 0
    # the control: without variation, concurrent requests on the seed are the same request
    assert sent_twice(problem_dir, tmp_path, monkeypatch, request_variation=False) > 0


@pytest.mark.slow
def test_a_resumed_run_does_not_ask_again_what_it_asked_before_the_stop(
    problem_dir, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    started: list[list[bytes]] = []  # the keys each session's ledger starts from

    class Ledger(RequestLedger):
        def __init__(self, answered=(), **kwargs) -> None:
            started.append(list(answered))
            super().__init__(answered, **kwargs)

    monkeypatch.setattr("evoforge.evolve.search._asking.RequestLedger", Ledger)
    db = tmp_path / "resume.db"
    with SloppyServer() as server:
        settings = dict(model="openai/sloppy", api_base=server.url, workers=1, tune=False)
        evoforge.run(problem_dir, db=db, budget=12, seed=1, llm_concurrency=2, **settings)
        before = [json.dumps(r.body["messages"], sort_keys=True) for r in server.chat_requests()]
        with Archive(db) as archive:
            run = archive.latest_run()
            stored = archive.answered_request_keys(run.id, 1000)
            # every answered call's key, once each, in the order the calls were made
            answered = [c for c in archive.llm_calls(run.id) if c.status == "ok"]
            assert stored == [c.request_key for c in answered]
        assert len(set(stored)) == len(stored) == len(set(before)) == len(before) > 0
        asyncio.run(resume_run(run.id, db, budget=30))
        after = [json.dumps(r.body["messages"], sort_keys=True) for r in server.chat_requests()]
    assert started == [[], stored]  # the resumed session's ledger knows what was asked
    assert len(after) > len(before) and not set(after[len(before) :]) & set(before)
