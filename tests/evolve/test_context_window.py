"""Prompts within the model's context window: local servers with 4k or 8k windows.

The window comes from the model's spec, else ``[prompts] max_context``, else litellm's model
info; a prompt is trimmed to leave the answer's ``max_tokens`` free by the rules of
``max_chars``; one that cannot fit is a ``bad_request`` model failure, never sent. Model calls
go to the fake OpenAI server on 127.0.0.1 (no network).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import re
import sqlite3
import subprocess
import sys
from contextlib import closing

import pytest

from evoforge.archive import Archive
from evoforge.evolve import RunConfig, start_run
from evoforge.evolve.models import ModelSpec, RetryPolicy, load_litellm
from evoforge.evolve.prompts import PromptConfig, PromptContext, build_messages
from evoforge.evolve.proposals import (
    CHARS_PER_TOKEN,
    ContextWindow,
    PromptTooLarge,
    ProposalRequest,
    ProposalSetup,
    _window,
    context_window,
    count_tokens,
    fit_messages,
    propose,
)
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC
from tests.evolve.openai_server import OpenAIServer
from tests.evolve.run_history import PROBLEM, SEED
from tests.evolve.test_llm_acceptance import environment
from tests.evolve.test_prompts import big_context, program, section, state_of, user_text

FAKE = "openai/evoforge-fake"  # litellm does not know it: no window unless one is set
KNOWN = "openai/gpt-4o-mini"  # litellm's model info: 128,000 input tokens
ANSWER = 1024


@pytest.fixture(autouse=True)
def fresh_lookups(monkeypatch):
    """Each test looks windows up afresh (the cache lives as long as a worker)."""
    monkeypatch.setattr(_window, "_known", {})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-context-window")


def tokens_of(messages: list[dict[str, str]]) -> int:
    return load_litellm().token_counter(model=FAKE, messages=messages)


def fit(context: PromptContext, window: int, config: PromptConfig | None = None):
    fitted = fit_messages(
        lambda limit: build_messages(PROBLEM, context, config, limit=limit),
        ContextWindow(FAKE, window, "a test"),
        ANSWER,
        lambda messages: count_tokens(FAKE, messages),
    )
    assert fitted.answer_tokens == ANSWER  # these windows hold the whole answer
    return fitted.messages


# --- fitting a prompt into a window -----------------------------------------------------------


def test_a_4k_window_gets_a_prompt_within_it_by_both_counts() -> None:
    context = big_context(parent_artifact_chars=3000)
    messages = fit(context, 4096)
    allowed = 4096 - ANSWER - _window.margin_tokens(4096)
    chars = sum(len(m["content"]) for m in messages)
    assert math.ceil(chars / CHARS_PER_TOKEN) <= allowed  # the estimate
    assert tokens_of(messages) <= allowed  # litellm's count
    user = user_text(messages)
    assert f"```python\n{SEED.rstrip()}\n```" in section(user, "## Current program")
    assert "## Task" in user and "<<<<<<< SEARCH" in user
    note = re.search(r"\(Left out to keep this prompt within \d+ characters, set by (.*?): ", user)
    assert note is not None
    assert (
        note.group(1) == f"the context window of {FAKE} (4096 tokens, {ANSWER} kept for the answer)"
    )


def test_smaller_windows_leave_out_pieces_in_the_documented_order() -> None:
    context = big_context(parent_artifact_chars=3000)
    seen = []
    for window in (32_768, 16_384, 12_288, 8192, 6144, 5120, 4096, 3072, 2560):
        user = user_text(fit(context, window))
        memory, sources, failures, inspirations = state_of(user)
        seen.append((memory, sources, failures, inspirations))
        assert memory <= (sources == 3) and memory <= (failures == 3)  # memory goes first
        assert sources == 3 or not memory  # then the best programs' code
        assert failures == 3 or sources == 0  # then the lineage's failures
        assert inspirations == 5 or failures == 0  # then the inspirations
        if "evaluation feedback" in user.split("Left out", 1)[-1]:
            assert inspirations == 0  # the parent's feedback last
    assert seen == sorted(seen, reverse=True)  # a smaller window never shows more
    assert seen[0] == (True, 3, 3, 5) and seen[-1] == (False, 0, 0, 0)


def test_a_tokenizer_denser_than_the_estimate_makes_the_prompt_smaller_again() -> None:
    """When the count says the estimate was optimistic, the prompt is built again smaller."""
    context = big_context(parent_artifact_chars=3000)
    window = ContextWindow(FAKE, 8192, "a test")
    allowed = window.prompt_tokens(ANSWER)

    def dense(messages):  # two characters a token: denser than CHARS_PER_TOKEN assumes
        return math.ceil(sum(len(m["content"]) for m in messages) / 2)

    def build(limit):
        return build_messages(PROBLEM, context, limit=limit)

    messages = fit_messages(build, window, ANSWER, dense).messages
    assert dense(messages) <= allowed
    estimated = fit_messages(build, window, ANSWER, lambda _: None).messages
    assert dense(estimated) > allowed  # without the count, the estimate alone was too large


def test_a_window_only_limits_when_tighter_than_max_chars() -> None:
    context = big_context(parent_artifact_chars=3000)
    config = PromptConfig(max_chars=12_000)
    user = user_text(fit(context, 200_000, config))
    assert "within 12000 characters, set by [prompts] max_chars:" in user
    assert user == user_text(build_messages(PROBLEM, context, config))


def test_an_answer_too_large_for_the_window_is_cut_to_what_the_prompt_leaves() -> None:
    """A 4k-window model with the run's default max_tokens (4096): prompts are still sent, and
    the answer gets the rest of the window (never less than MIN_ANSWER_TOKENS)."""
    window = ContextWindow(FAKE, 4096, "[prompts] max_context")
    fitted = fit_messages(
        lambda limit: build_messages(PROBLEM, big_context(), limit=limit),
        window,
        4096,
        lambda messages: count_tokens(FAKE, messages),
    )
    room = 4096 - _window.margin_tokens(4096)
    assert _window.MIN_ANSWER_TOKENS <= fitted.answer_tokens < 4096
    assert tokens_of(fitted.messages) + fitted.answer_tokens <= room
    user = user_text(fitted.messages)
    assert f"```python\n{SEED.rstrip()}\n```" in section(user, "## Current program")
    assert "<<<<<<< SEARCH" in user


def test_fixed_pieces_larger_than_half_the_window_leave_a_shorter_answer() -> None:
    """The program and task alone take most of a 2k window: the answer is cut, not the call."""
    middling = SEED.replace("B = 2.0", "B = 2.0\n" + "C = [0, 1, 2, 3]\n" * 60)
    context = dataclasses.replace(big_context(), parent=program(middling, 1))
    fitted = fit_messages(
        lambda limit: build_messages(PROBLEM, context, limit=limit),
        ContextWindow(FAKE, 2048, "a test"),
        ANSWER,
        lambda messages: count_tokens(FAKE, messages),
    )
    room = 2048 - _window.margin_tokens(2048)
    assert tokens_of(fitted.messages) > room - ANSWER  # would not fit beside the whole answer
    assert _window.MIN_ANSWER_TOKENS <= fitted.answer_tokens < ANSWER
    assert tokens_of(fitted.messages) + fitted.answer_tokens <= room


def test_a_window_too_small_for_any_answer_is_an_error_naming_the_fix() -> None:
    with pytest.raises(PromptTooLarge, match=r"at least 512 kept for the answer") as info:
        fit_messages(
            lambda limit: build_messages(PROBLEM, big_context(), limit=limit),
            ContextWindow(FAKE, 768, "[prompts] max_context"),
            4096,
            lambda _: None,
        )
    message = str(info.value)
    assert FAKE in message and "768 tokens (from [prompts] max_context)" in message
    assert "larger context window" in message


# --- where the window comes from -------------------------------------------------------------


def window_of(spec: ModelSpec, config: PromptConfig) -> ContextWindow | None:
    return asyncio.run(context_window(spec, config))


def test_the_spec_wins_over_the_config_which_wins_over_litellm() -> None:
    with_config = PromptConfig(max_context=8192)
    assert window_of(ModelSpec(KNOWN, max_context=4096), with_config) == ContextWindow(
        KNOWN, 4096, "its max_context"
    )
    assert window_of(ModelSpec(KNOWN), with_config) == ContextWindow(
        KNOWN, 8192, "[prompts] max_context"
    )
    assert window_of(ModelSpec(KNOWN), PromptConfig()) == ContextWindow(
        KNOWN, 128_000, "litellm's model info"
    )


@pytest.mark.parametrize(
    "model",
    [
        FAKE,
        "hosted_vllm/Qwen/Qwen2.5-Coder-1.5B-Instruct",
        "offline/mutator",
    ],
)
def test_a_model_litellm_does_not_know_has_no_window(model: str) -> None:
    with OpenAIServer() as server:  # Ollama's look-up asks the server (/api/show): a 404 here
        assert window_of(ModelSpec(model, api_base=server.url), PromptConfig()) is None


@pytest.mark.parametrize(
    ("trained", "window"), [(32_768, _window.OLLAMA_WINDOW), (4096, 4096), (None, 8192)]
)
@pytest.mark.parametrize("prefix", ["ollama", "ollama_chat"])
def test_an_ollama_window_is_what_evoforge_will_ask_the_server_for(prefix, trained, window):
    """Ollama's /api/show gives the trained length; the window is at most OLLAMA_WINDOW of it,
    and OLLAMA_WINDOW when the server says nothing (a 404)."""
    with OpenAIServer(ollama_context=trained) as server:
        spec = ModelSpec(f"{prefix}/qwen2.5-coder:1.5b", api_base=server.url.removesuffix("/v1"))
        found = window_of(spec, PromptConfig())
    assert found is not None and found.tokens == window
    assert _window.num_ctx(spec.model, found) == window
    assert _window.num_ctx(FAKE, found) is None  # other providers take no per-request window


def test_litellm_is_asked_once_per_model_and_endpoint(monkeypatch) -> None:
    asked = []
    monkeypatch.setattr(_window, "_look_up", lambda model, base: asked.append(model) or 4096)
    for _ in range(3):
        assert window_of(ModelSpec(FAKE), PromptConfig()).tokens == 4096
    window_of(ModelSpec(FAKE, api_base="http://127.0.0.1:9/v1"), PromptConfig())
    assert asked == [FAKE, FAKE]


def test_max_context_settings_are_checked() -> None:
    with pytest.raises(Exception, match="max_context"):
        PromptConfig(max_context=10)
    with pytest.raises(Exception, match="max_context"):
        ModelSpec.from_value({"model": FAKE, "max_context": 0})
    assert ModelSpec.from_value({"model": FAKE, "max_context": 8192}).max_context == 8192


# --- through propose() -----------------------------------------------------------------------


def setup_with(prompts: PromptConfig, model: str = FAKE) -> ProposalSetup:
    return ProposalSetup(
        problem=PROBLEM,
        prompts=prompts,
        temperature=0.7,
        max_tokens=ANSWER,
        retry=RetryPolicy(max_attempts=1),
        models=(model,),
    )


def ask(setup: ProposalSetup, context: PromptContext, server: OpenAIServer, **spec):
    request = ProposalRequest(
        1, context, ModelSpec(setup.models[0], api_base=server.url, **spec), 7, (1, 2)
    )
    return asyncio.run(propose(setup, request))


def test_an_unknown_model_gets_max_chars_only() -> None:
    context = big_context(parent_artifact_chars=3000)
    config = PromptConfig(max_chars=12_000)
    with OpenAIServer(answer="No change.") as server:
        proposal = ask(setup_with(config), context, server)
        (sent,) = server.chat_requests()
    assert proposal.completion is not None
    assert sent.body["messages"] == build_messages(PROBLEM, context, config)
    assert "set by [prompts] max_chars:" in sent.body["messages"][1]["content"]


@pytest.mark.parametrize("prefix", ["ollama", "ollama_chat"])
def test_ollama_is_sent_the_window_prompts_were_fitted_to(prefix) -> None:
    """A small model with the run's default max_tokens on Ollama: every request names the
    window as num_ctx (so the server cuts nothing: ``truncated`` counts prompts it would have
    cut), and prompt and answer together fit it."""
    context = big_context(parent_artifact_chars=3000)
    setup = dataclasses.replace(setup_with(PromptConfig(), f"{prefix}/qwen2.5-coder:1.5b"))
    setup = dataclasses.replace(setup, max_tokens=4096)
    with OpenAIServer(answer="No change.", ollama_context=4096) as server:
        request = ProposalRequest(
            1,
            context,
            ModelSpec(setup.models[0], api_base=server.url.removesuffix("/v1")),
            7,
            (1, 2),
        )
        proposal = asyncio.run(propose(setup, request))
        (sent,) = server.chat_requests()
        truncated = server.truncated
    assert proposal.completion is not None and proposal.failure is None
    options = sent.body["options"]
    assert options["num_ctx"] == 4096
    assert _window.MIN_ANSWER_TOKENS <= options["num_predict"] < 4096
    prompt = sent.body.get("messages") or [{"role": "user", "content": sent.body["prompt"]}]
    assert tokens_of(prompt) + options["num_predict"] <= 4096
    assert truncated == 0


def test_a_prompt_that_cannot_fit_fails_as_a_model_call_naming_the_fix() -> None:
    huge = SEED.replace("B = 2.0", "B = 2.0\n" + "C = [0, 1, 2, 3]\n" * 400)
    context = dataclasses.replace(big_context(), parent=program(huge, 1))
    with OpenAIServer() as server:
        proposal = ask(setup_with(PromptConfig()), context, server, max_context=2048)
        assert server.chat_requests() == []  # never sent
    assert proposal.completion is None and proposal.failure is not None
    failure = proposal.failure
    assert failure.kind == "bad_request" and [a.kind for a in failure.attempts] == ["bad_request"]
    message = failure.message
    assert "\n" not in message
    assert message.startswith(f"{FAKE}: the prompt is ")
    assert "with everything optional left out" in message
    assert "context window of 2048 tokens (from its max_context)" in message
    assert f"at least {_window.MIN_ANSWER_TOKENS} kept for the answer" in message
    assert "larger context window" in message and "max_context" in message
    assert int(re.search(r"the prompt is (\d+) tokens", message).group(1)) > 2048 - ANSWER


@pytest.mark.slow
def test_a_run_records_a_prompt_too_large_as_a_model_failure(make_problem, tmp_path) -> None:
    """Through the controller: a failed call in the archive, and the run ends as a run whose
    model keeps failing does, without a crash."""
    body = "\n".join(f"    x{i} = {i}" for i in range(600))
    seed = f"# EVOLVE-BLOCK-START\ndef main():\n{body}\n    return [x1, x2]\n# EVOLVE-BLOCK-END\n"
    folder = make_problem(TRIVIAL_SPEC, seed)
    with OpenAIServer() as server:
        config = RunConfig(
            problem=str(folder), model=FAKE, api_base=server.url, budget=6, workers=1,
            max_failed_streak=3, prompts={"max_context": 1024}, max_tokens=256,
        )  # fmt: skip
        info, report = asyncio.run(start_run(config, tmp_path / "w.db"))
        assert server.chat_requests() == []
    assert report.status == "failed"
    with Archive(tmp_path / "w.db") as archive:
        calls = archive.llm_calls(info.id)
    assert len(calls) == 3
    assert {(c.status, c.error_kind, c.model) for c in calls} == {("error", "bad_request", FAKE)}
    assert all("context window of 1024 tokens" in c.error for c in calls)


# --- end to end: the CLI, a worker process, real HTTP ------------------------------------------


@pytest.mark.slow
def test_a_run_sends_the_server_only_prompts_within_max_context(make_problem, tmp_path) -> None:
    """``--max-context`` on the command line; a worker process builds the prompts."""
    window, answer = 768, 128
    db, folder = tmp_path / "ctx.db", make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)
    with OpenAIServer() as server:
        done = subprocess.run(
            [
                sys.executable, "-m", "evoforge", "run", str(folder), "--model", FAKE,
                "--api-base", server.url, "--max-context", str(window), "--max-tokens",
                str(answer), "--budget", "30", "--workers", "2", "--proposal-workers", "1",
                "--db", str(db), "-q",
            ],
            env=environment(),
            capture_output=True,
            text=True,
            timeout=240,
        )  # fmt: skip
        requests = server.chat_requests()
    assert done.returncode == 0, done.stdout + done.stderr
    with closing(sqlite3.connect(db)) as conn:
        (candidates,) = conn.execute("SELECT count(*) FROM programs WHERE seq > 0").fetchone()
    assert len(requests) >= candidates >= 10  # one call a candidate (tuning trials call none)
    allowed = window - answer - _window.margin_tokens(window)
    for request in requests:
        messages = request.body["messages"]
        assert request.body["max_tokens"] == answer
        assert tokens_of(messages) <= allowed
        assert tokens_of(messages) + answer <= window
    notes = [r.body["messages"][1]["content"] for r in requests]
    notes = [n for n in notes if "Left out to" in n]
    assert notes and all(f"the context window of {FAKE} ({window} tokens" in n for n in notes)
    with closing(sqlite3.connect(db)) as conn:
        (config,) = conn.execute("SELECT config_json FROM runs").fetchone()
    assert json.loads(config)["prompts"]["max_context"] == window
