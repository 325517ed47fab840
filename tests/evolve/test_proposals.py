"""Proposal workers: real processes answering the controller's requests off its loop.

A pool of ``python -m evoforge.evolve.proposals`` processes gets requests with the offline
model (no network) or with a model on a local OpenAI-compatible server; the tests check what
comes back, that the same request gives the same proposal in a worker and in this process
(what keeps a one-slot run reproducible), that a worker killed with ``kill -9`` is replaced and
its request answered by another, and that stopping with model calls in flight leaves no
"coroutine ... was never awaited" warning behind, in workers or in a run's output.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import subprocess
import sys
import warnings

import pytest

from evoforge.archive import Program, Status, program_id
from evoforge.evolve import RunConfig
from evoforge.evolve.models import ModelSpec
from evoforge.evolve.prompts import Mode, PromptContext
from evoforge.evolve.proposals import (
    Answer,
    CoroutineTrackingExecutor,
    LocalProposer,
    Proposal,
    ProposalPool,
    ProposalRequest,
    ProposalSetup,
    Question,
    default_processes,
)
from evoforge.problems import load_problem
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC
from tests.evolve.openai_server import OpenAIServer

pytestmark = pytest.mark.timeout(300)

OFFLINE = "offline/mutator"


def setup_for(problem_dir, model: str = OFFLINE) -> ProposalSetup:
    problem = load_problem(problem_dir)
    config = RunConfig(problem=str(problem_dir))
    return ProposalSetup(
        problem=problem,
        prompts=config.prompts,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        retry=config.retry,
        models=(model,),
    )


def request(setup: ProposalSetup, seq: int, **spec: object) -> ProposalRequest:
    source = setup.problem.seed_source
    parent = Program(
        run_id="r",
        id=program_id(source),
        seq=0,
        source=source,
        parent_id=None,
        island=0,
        generation=0,
        status=Status.OK,
        score=-3.0,
        objectives={"score": -3.0},
    )
    return ProposalRequest(
        seq,
        PromptContext(Mode.DIFF, parent),
        ModelSpec(model=setup.models[0], **spec),
        model_seed=1000 + seq,
        jitter_seed=(7, seq, 1),
    )


@pytest.fixture
def tiny(make_problem):
    return make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)


def test_default_processes_is_half_the_cores_within_bounds():
    assert [default_processes(n) for n in (1, 2, 3, 8, 64)] == [1, 1, 1, 4, 16]


def test_workers_answer_requests_as_this_process_would(tiny):
    setup = setup_for(tiny)
    requests = [request(setup, seq) for seq in range(1, 9)]

    async def go():
        pool = ProposalPool(setup, 2)
        await pool.start()
        try:
            await pool.wait_ready()  # one worker ready: it could take every request alone
            while not all(worker.ready for worker in pool._workers):
                await asyncio.sleep(0.05)
            remote = await asyncio.gather(*(pool.propose(r) for r in requests))
        finally:
            stats = await pool.close()
        local = LocalProposer(setup)
        await local.start()
        here = [await local.propose(r) for r in requests]
        await local.close()
        return remote, here, stats

    remote, here, stats = asyncio.run(go())
    assert [p.seq for p in remote] == list(range(1, 9))
    for far, near in zip(remote, here, strict=True):
        assert far.failure is None and far.completion is not None
        assert far.completion.text == near.completion.text  # same request, same answer
        assert (far.child and far.child.source) == (near.child and near.child.source)
        assert far.edit_error == near.edit_error and far.syntax_error == near.syntax_error
    assert any(p.child is not None and p.child.source != tiny_seed(setup) for p in remote)
    assert stats.requests == 8 and len(stats.workers) == 2
    assert {w.pid for w in stats.workers} != {os.getpid()}
    assert all(w.cpu_s > 0 and w.setup_s > 0 for w in stats.workers)


def tiny_seed(setup: ProposalSetup) -> str:
    return setup.problem.seed_source


def test_a_worker_killed_mid_call_is_replaced_and_its_request_answered(tiny):
    """``kill -9`` of the worker holding a request (the model server delays its answer)."""
    with OpenAIServer(faults=["delay:3"]) as server:
        setup = setup_for(tiny, "openai/evoforge-fake")
        os.environ.setdefault("OPENAI_API_KEY", "sk-test")

        async def go():
            pool = ProposalPool(setup, 1)
            await pool.start()
            try:
                await pool.wait_ready()
                call = asyncio.create_task(
                    pool.propose(request(setup, 1, api_base=server.url, timeout_s=30))
                )
                while not server.requests:  # the worker's call reached the server
                    await asyncio.sleep(0.02)
                victim = pool._workers[0].proc.pid
                os.kill(victim, signal.SIGKILL)
                proposal = await call
            finally:
                stats = await pool.close()
            return proposal, stats, victim

        proposal, stats, victim = asyncio.run(go())
    assert stats.restarts == 1
    assert proposal.failure is None and proposal.completion is not None
    assert len(server.requests) == 2  # asked again, by the replacement
    assert victim not in {w.pid for w in stats.workers}


def test_closing_with_calls_in_flight_closes_them_without_warnings(tiny):
    """A run that stops while the model is thinking: calls cancelled, clients closed."""
    with OpenAIServer(faults=["delay:30"] * 4) as server:
        setup = setup_for(tiny, "openai/evoforge-fake")
        os.environ.setdefault("OPENAI_API_KEY", "sk-test")

        async def go():
            pool = ProposalPool(setup, 1)
            await pool.start()
            await pool.wait_ready()
            calls = [
                asyncio.create_task(
                    pool.propose(request(setup, seq, api_base=server.url, timeout_s=60))
                )
                for seq in (1, 2, 3)
            ]
            while len(server.requests) < 3:
                await asyncio.sleep(0.02)
            worker = pool._workers[0].proc
            for call in calls:
                call.cancel()
            await asyncio.gather(*calls, return_exceptions=True)
            stats = await pool.close()
            return stats, worker.returncode

        stats, code = asyncio.run(go())
    assert code == 0  # stopped on request, not killed after the grace period
    (worker,) = stats.workers
    assert worker.requests == 0


def test_stopping_right_after_requests_leaves_no_unawaited_coroutine(tiny, capfd):
    """Calls cancelled while litellm's synchronous half still runs in the executor: the
    provider coroutine it returns is closed, not left for the garbage collector to report."""
    with OpenAIServer(faults=["delay:30"] * 192) as server:
        setup = setup_for(tiny, "openai/evoforge-fake")
        os.environ.setdefault("OPENAI_API_KEY", "sk-test")

        async def go():
            pool = ProposalPool(setup, 1)
            await pool.start()
            await pool.wait_ready()
            calls = [
                asyncio.create_task(
                    pool.propose(request(setup, seq, api_base=server.url, timeout_s=60))
                )
                for seq in range(1, 33)
            ]
            await asyncio.sleep(0.01)  # the frames are out; the worker starts the calls
            stats = await pool.close()
            await asyncio.gather(*calls, return_exceptions=True)
            return stats

        # The window is a matter of timing: on a busy host the worker may not have started a
        # call when the pool closes. Every try must leave no unawaited coroutine; at least one
        # of three must hit the window, or the test says nothing.
        hit = 0
        for _ in range(3):
            (worker,) = asyncio.run(go()).workers
            err = capfd.readouterr().err
            assert "never awaited" not in err, err
            hit += worker.closed_unawaited
            if hit:
                break
    assert hit > 0  # the window this test is about was hit


def test_tracking_executor_closes_coroutines_that_never_started():
    async def provider_call() -> str:
        return "answer"

    executor = CoroutineTrackingExecutor(max_workers=1)
    made = executor.submit(provider_call).result()  # what litellm's sync half returns
    started = executor.submit(provider_call).result()
    assert asyncio.run(started) == "answer"  # awaited: nothing to close
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert executor.close_unawaited() == 1
        del made
        gc.collect()
    executor.shutdown()
    assert not [w for w in caught if "never awaited" in str(w.message)]


def test_a_worker_exits_without_teardown_but_runs_atexit_and_flushes():
    # exit_now skips the interpreter's teardown (a second with litellm loaded); what a plugin
    # or litellm left to atexit, and text still buffered in the streams, must not be lost.
    script = (
        "import atexit, sys\n"
        "from evoforge.evolve.proposals._worker import exit_now\n"
        "atexit.register(lambda: print('atexit ran', file=sys.stderr))\n"
        "print('buffered', end='')\n"
        "sys.stderr.write('unflushed')\n"
        "exit_now(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 3
    assert done.stdout == "buffered"
    assert done.stderr == "unflushedatexit ran\n"


@pytest.mark.slow
def test_a_run_stopped_with_model_calls_in_flight_prints_no_warning(tmp_path):
    """The CLI, SIGINT while every model call waits on a slow server."""
    from tests.evolve.test_cli_process import wait_for_programs
    from tests.evolve.test_llm_acceptance import environment, evoforge

    db = tmp_path / "stop.db"
    with OpenAIServer(faults=["ok", "ok", "ok", "delay:60"], cycle=True) as server:
        proc = evoforge(
            "run", "circle_packing", "--model", "openai/evoforge-fake", "--api-base",
            server.url, "--budget", 1000, "--workers", 2, "--db", db, "-q",
            env=environment(PYTHONWARNINGS="default"),
        )  # fmt: skip
        try:
            wait_for_programs(db, 4, proc)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 0, err
    assert "never awaited" not in err and "Traceback" not in err
    assert "nclosed" not in err  # no unclosed client session or transport


def question(seq: int, model: str, **spec: object) -> Question:
    return Question(
        seq,
        ({"role": "user", "content": "Rewrite these instructions."},),
        ModelSpec(model=model, **spec),
        model_seed=seq,
        jitter_seed=(7, seq, 2),
    )


def test_a_question_is_answered_by_a_worker_beside_proposals_of_the_same_seq(tiny):
    """The text comes back unapplied; a question and a proposal numbered alike both get
    their own reply (requests are matched by kind and number)."""
    text = "Done.\n\n```system\nBe precise.\n```\n\n```task\nImprove $primary.\n```"
    with OpenAIServer(answer=text) as server:
        setup = setup_for(tiny, "openai/evoforge-fake")
        os.environ.setdefault("OPENAI_API_KEY", "sk-test")

        async def go():
            pool = ProposalPool(setup, 1)
            await pool.start()
            try:
                await pool.wait_ready()
                return await asyncio.gather(
                    pool.ask(question(3, "openai/evoforge-fake", api_base=server.url)),
                    pool.propose(request(setup, 3, api_base=server.url)),
                )
            finally:
                await pool.close()

        answer, proposal = asyncio.run(go())
    assert answer.seq == 3 and answer.failure is None and answer.completion.text == text
    assert isinstance(answer, Answer) and isinstance(proposal, Proposal)
    assert proposal.seq == 3 and proposal.completion.text == text  # applied to the parent
    assert proposal.edit_error or proposal.syntax_error  # (it is no program)
    bodies = [r.body["messages"] for r in server.chat_requests()]
    assert [{"role": "user", "content": "Rewrite these instructions."}] in bodies


def test_the_offline_model_answers_a_question_the_same_in_a_worker_and_here(tiny):
    setup = setup_for(tiny)

    async def go():
        pool = ProposalPool(setup, 1)
        await pool.start()
        try:
            far = await pool.ask(question(1, OFFLINE))
        finally:
            await pool.close()
        local = LocalProposer(setup)
        await local.start()
        near = await local.ask(question(1, OFFLINE))
        await local.close()
        return far, near

    far, near = asyncio.run(go())
    assert far.failure is None and far.completion.text == near.completion.text
    assert far.completion.text  # it says it has no program to change


def test_a_failed_question_is_an_answer_with_the_failure(tiny):
    with OpenAIServer(faults=["401"]) as server:
        setup = setup_for(tiny, "openai/evoforge-fake")
        os.environ.setdefault("OPENAI_API_KEY", "sk-test")
        local = LocalProposer(setup)

        async def go():
            await local.start()
            try:
                return await local.ask(question(1, "openai/evoforge-fake", api_base=server.url))
            finally:
                await local.close()

        answer = asyncio.run(go())
    assert answer.completion is None and answer.failure.kind == "auth"


def test_a_worker_stopped_before_it_is_ready_ends_at_once(tiny, caplog):
    """A session that ends during start-up (the seed was refused) does not wait for its
    workers to finish importing litellm: they are terminated, never killed after the grace
    period with a warning."""
    setup = setup_for(tiny, "offline/mutator")

    async def go():
        pool = ProposalPool(setup, 1)
        await pool.start()
        worker = pool._workers[0]
        assert not worker.ready  # it is still importing litellm
        await pool.close()
        return worker.proc.returncode

    code = asyncio.run(go())
    assert code == -signal.SIGTERM  # ended by the terminate, not by its own "stop"
    assert "did not stop" not in caplog.text
