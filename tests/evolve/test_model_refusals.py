"""Runs against servers that refuse: a smaller window than the run was told, an error that
retrying cannot fix, and what the user sees meanwhile (one line naming the error and the fix,
``evoforge failures`` counting failed calls, EVOFORGE_LOG=info's per-call records, a progress
line in a log, no candidate's warnings). Model calls go to the fake OpenAI server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
import warnings

import pytest
from click.testing import CliRunner
from rich.console import Console

from evoforge.archive import Archive
from evoforge.evolve import RunConfig, Snapshot, resume_run, start_run
from evoforge.evolve.checks._syntax import check_syntax
from evoforge.evolve.checks._warnings import quiet_candidate_warnings
from evoforge.evolve.cli import cli
from evoforge.evolve.mining import failure_hint
from evoforge.evolve.proposals import _calibration
from evoforge.evolve.run._endings import REPEATED_ERROR, REPEATED_UNSENT, Budgets
from evoforge.evolve.run._progress import LiveProgress
from evoforge.islands import fingerprint
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC
from tests.evolve.openai_server import OpenAIServer
from tests.evolve.test_llm_acceptance import environment

FAKE = "openai/evoforge-fake"


@pytest.fixture(autouse=True)
def nothing_learned(monkeypatch):
    _calibration.forget()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-refusals")
    yield
    _calibration.forget()


def run(config: RunConfig, db):
    return asyncio.run(start_run(config, db))


def config_for(folder, server: OpenAIServer, **fields) -> RunConfig:
    # every evaluation a model call (no tuning trials, no edit blocks tried alone, no answer
    # carried to the run's best): these tests count the calls
    settings = dict(
        problem=str(folder), model=FAKE, api_base=server.url, workers=1, proposal_workers=2,
        llm_concurrency=2, retry={"max_attempts": 1},
        search={"tune_changed": 0, "split_edits": 0, "carry_to_best": False},
    )  # fmt: skip
    return RunConfig(**(settings | fields))


# --- a server that counts more tokens than tiktoken ------------------------------------------


@pytest.mark.slow
def test_a_run_sends_a_denser_server_nothing_over_its_window(make_problem, tmp_path):
    """The server's tokenizer makes 15 % more tokens than tiktoken and its 4k window is the one
    the run was told, with the default max_tokens (4096, the whole window): no request is
    refused; each answer gets what the window leaves beside the prompt as the server counts
    it (issue 35: 3,350 + 948 = 4,298 tokens sent to a 4,096-token window)."""
    constants = "".join(f"        c{i} = {i} * 0.125  # a constant\n" for i in range(80))
    folder = make_problem(
        TRIVIAL_SPEC, TRIVIAL_SEED.replace("b = 0.25\n", "b = 0.25\n" + constants)
    )
    window = 4096  # a prompt of about 1,600 tokens: 15 % of it is more than the margin
    with OpenAIServer(window=window, density=1.15) as server:
        config = config_for(folder, server, budget=10, prompts={"max_context": window})
        _, report = run(config, tmp_path / "w.db")
        refused, requests = server.refused, server.chat_requests()
        sizes = [(server.prompt_tokens(r.body["messages"]), r.body["max_tokens"]) for r in requests]
    assert report.status == "finished", report.reason
    assert refused == 0 and len(sizes) >= 9
    for prompt, max_tokens in sizes:
        assert prompt + max_tokens <= window  # what the server holds
        assert prompt + max_tokens >= window * 0.75  # and not much less: the answer's room


# --- a smaller window than the run was told ----------------------------------------------------


@pytest.mark.slow
def test_a_run_learns_the_servers_window_from_a_handful_of_refusals(make_problem, tmp_path):
    """Told 8192, the server holds 1024 (and counts 15 % more than tiktoken): a few calls are
    refused (at most one per call in flight before the first refusal came back), then every
    request fits, and the run finishes its budget."""
    folder = make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)
    with OpenAIServer(window=1024, density=1.15) as server:
        config = config_for(
            folder, server, budget=12, prompts={"max_context": 8192}, max_tokens=256
        )
        info, report = run(config, tmp_path / "w.db")
        refused, requests = server.refused, server.chat_requests()
    assert report.status == "finished", report.reason
    assert 1 <= refused <= 2  # llm_concurrency = 2: one per call in flight at most
    with Archive(tmp_path / "w.db") as archive:
        calls = archive.llm_calls(info.id)
    retried = [c for c in calls if c.status == "retry"]
    assert len(retried) == refused  # each refusal is kept, as a retried attempt
    assert len(requests) >= 11 + refused  # the run went on: its budget, all but the seed
    assert all("maximum context length is 1024" in (c.error or "") for c in retried)


@pytest.mark.slow
def test_a_resumed_run_starts_from_the_window_it_learned(make_problem, tmp_path):
    """The window a server taught one session is stored with the run (a ``model_learned``
    event): the resumed session, in a fresh process state, sends nothing over it."""
    folder = make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)
    db = tmp_path / "w.db"
    with OpenAIServer(window=1024, density=1.15) as server:
        config = config_for(folder, server, budget=6, prompts={"max_context": 8192}, max_tokens=256)
        info, _ = run(config, db)
        first = server.refused
        _calibration.forget()  # as a new process: nothing learned in memory
        _, report = asyncio.run(resume_run(info.id, db, budget=12))
        assert report.status == "finished", report.reason
        assert first >= 1 and server.refused == first  # none after the resume
    with Archive(db) as archive:
        (servers,) = [e.data["servers"] for e in archive.events(info.id, "model_learned")][-1:]
    assert [(s["model"], s["window"]) for s in servers] == [(FAKE, 1024)]


@pytest.mark.slow
def test_a_window_nothing_fits_stops_the_run_with_one_line(make_problem, tmp_path):
    folder = make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)
    with OpenAIServer(window=300, density=1.15) as server:
        config = config_for(
            folder, server, budget=50, prompts={"max_context": 8192}, max_tokens=256
        )
        _, report = run(config, tmp_path / "w.db")
        sent = len(server.chat_requests())
    assert report.status == "failed"
    assert "\n" not in report.reason
    # the refusals' prompts were sent; what follows is never sent, so it takes REPEATED_UNSENT
    assert f"failed {REPEATED_UNSENT} calls in a row with the same error" in report.reason
    assert "300 tokens" in report.reason
    assert sent <= 4  # refused, then fitted to 300 tokens: too small to send anything


# --- an error retrying cannot fix ---------------------------------------------------------------


@pytest.mark.slow
def test_a_repeated_error_that_does_not_heal_stops_the_run_at_once(make_problem, tmp_path):
    """Every call a 400 (not a window): the run stops after REPEATED_ERROR of them (and the
    ones in flight), saying which error and what to check, instead of after 200."""
    folder = make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)
    db = tmp_path / "w.db"
    with OpenAIServer(faults=["400"], cycle=True) as server:
        _, report = run(config_for(folder, server, budget=50), db)
        sent = len(server.chat_requests())
    assert report.status == "failed"
    reason = report.reason
    assert "\n" not in reason
    assert reason.startswith(f"{FAKE} failed {REPEATED_ERROR} calls in a row with the same error")
    assert "(bad_request)" in reason and "scripted fault 400" in reason
    assert "Fix: the server refuses the request as evoforge makes it" in reason
    assert sent <= REPEATED_ERROR + 2
    failures = CliRunner().invoke(cli, ["failures", "--db", str(db)])
    header = failures.output.splitlines()[0]
    assert f"{sent} of {sent + 1} attempts failed, in 1 groups" in header  # the seed + the calls


def test_the_streak_counts_one_error_repeated_and_resets_on_an_answer() -> None:
    config = RunConfig(problem="tiny", budget=10)
    budgets = Budgets(config, Snapshot(run_id="r", budget=10), 0.0)
    for n in range(REPEATED_ERROR - 1):
        budgets.model_failed("a/m", "bad_request", f"a/m: bad request number {n}")
    budgets.model_failed("a/m", "rate_limit", "slow down")  # heals by itself: a reset
    for n in range(REPEATED_ERROR - 1):
        budgets.model_failed("a/m", "bad_request", f"a/m: bad request number {n}")
    budgets.model_answered()
    for n in range(REPEATED_ERROR - 1):
        budgets.model_failed("a/m", "bad_request", f"a/m: bad request number {n}")
    budgets.model_failed("b/m", "bad_request", "a/m: bad request number 9")  # another model
    assert budgets.ending() is None
    for _ in range(REPEATED_ERROR):
        budgets.model_failed("b/m", "auth", "b/m: key refused")
    ending = budgets.ending()
    assert ending is not None and ending.status == "failed" and not ending.drain
    assert "b/m failed 5 calls in a row" in ending.reason and "refused the key" in ending.reason


def test_prompts_that_never_left_stop_the_run_only_after_a_longer_streak() -> None:
    """A prompt too large for the window is not sent: the next parent may fit, so a few in a
    row go on; REPEATED_UNSENT in a row say nothing fits."""
    config = RunConfig(problem="tiny", budget=10)
    budgets = Budgets(config, Snapshot(run_id="r", budget=10), 0.0)
    too_large = "a/m: the prompt is {} tokens, over the 576 tokens left for it"
    for n in range(REPEATED_UNSENT - 1):
        budgets.model_failed("a/m", "bad_request", too_large.format(600 + n), sent=False)
    assert budgets.ending() is None and REPEATED_UNSENT - 1 > REPEATED_ERROR
    budgets.model_failed("a/m", "bad_request", too_large.format(700), sent=False)
    ending = budgets.ending()
    assert ending is not None and ending.status == "failed"
    assert f"a/m failed {REPEATED_UNSENT} calls in a row" in ending.reason


def test_a_missing_key_hint_names_the_variable_and_that_a_local_server_takes_any() -> None:
    message = (
        "openai/m: auth (not retryable): AuthenticationError: litellm.AuthenticationError: "
        "OpenAIException - Missing credentials. Please pass an `api_key`, or set the "
        "`OPENAI_API_KEY` environment variable."
    )
    hint = failure_hint("auth", message)
    assert "no key was set: export OPENAI_API_KEY=<your key>" in hint
    assert "a local server (api_base set) takes any key, e.g. OPENAI_API_KEY=anything" in hint
    assert "refused" not in hint
    refused = failure_hint("auth", "openai/m: AuthenticationError: Incorrect API key provided")
    assert "the provider refused the key" in refused


# --- what the user sees -------------------------------------------------------------------------


@pytest.mark.slow
def test_evoforge_log_info_shows_each_call_and_no_litellm_line(make_problem, tmp_path):
    folder = make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)
    with OpenAIServer() as server:
        done = subprocess.run(
            [
                sys.executable, "-m", "evoforge", "run", str(folder), "--model", FAKE,
                "--api-base", server.url, "--budget", "4", "--workers", "1",
                "--proposal-workers", "1", "--db", str(tmp_path / "log.db"), "-q",
            ],
            env=environment(EVOFORGE_LOG="info"),
            capture_output=True,
            text=True,
            timeout=240,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = [line for line in done.stderr.splitlines() if f"to {FAKE}: ok, tokens" in line]
    assert records, done.stderr
    assert "tokens in/out" in records[0] and " s" in records[0]
    assert "LiteLLM" not in done.stderr


def test_a_log_gets_a_progress_line_every_so_often() -> None:
    stream = io.StringIO()
    now = [0.0]
    display = LiveProgress(
        Console(file=stream, width=10_000, force_terminal=False), every_s=30, clock=lambda: now[0]
    )
    snapshot = Snapshot(run_id="r", budget=100, evaluations=40, best_score=2.5, model_calls=50)
    display.update(snapshot)  # too soon
    assert stream.getvalue() == ""
    now[0] = 31.0
    display.update(snapshot)
    now[0] = 40.0
    display.update(snapshot)  # too soon after the last
    assert stream.getvalue().splitlines() == [
        "r: evaluations 40/100, best 2.5, model calls 50 (1.25 per evaluation)"
    ]


def test_a_candidates_warnings_stay_off_the_users_stderr() -> None:
    source = 'PATTERN = "\\d+"\n\ndef main():\n    return [1, 2]\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet_candidate_warnings()
        assert check_syntax(source) is None
        fingerprint(source, "python")
        compile("x = 1\n", "some_module.py", "exec")
    assert caught == []
    with warnings.catch_warnings(record=True) as caught:  # evoforge's own files still warn
        warnings.simplefilter("always")
        quiet_candidate_warnings()
        compile(source, "evoforge_module.py", "exec")
    assert caught
