"""Prompts counted in the server's tokens, and windows learned from its refusals.

The fake server here is strict, as vLLM is: it counts a prompt in its own tokens (15 % denser
than tiktoken) and refuses, with a 400 in OpenAI's words, a request whose prompt and
``max_tokens`` do not fit its window. Model calls go to it on 127.0.0.1 (no network).
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from evoforge.evolve.mining import read_refusal
from evoforge.evolve.models import ModelSpec, RetryPolicy
from evoforge.evolve.prompts import PromptConfig
from evoforge.evolve.proposals import ProposalRequest, ProposalSetup, _calibration, propose
from evoforge.evolve.proposals._window import margin_tokens
from tests.evolve.openai_server import OpenAIServer
from tests.evolve.run_history import PROBLEM
from tests.evolve.test_prompts import big_context

FAKE = "openai/evoforge-fake"
DENSE = 1.15


@pytest.fixture(autouse=True)
def nothing_learned(monkeypatch):
    """Each test starts with nothing learned of any server (it lives as long as a process)."""
    _calibration.forget()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-server-tokens")
    yield
    _calibration.forget()


# --- reading a refusal -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "window", "prompt"),
    [
        pytest.param(
            "litellm.BadRequestError: OpenAIException - This model's maximum context length is "
            "4096 tokens. However, you requested 4298 tokens (3350 in the messages, 948 in the "
            "completion). Please reduce the length of the messages or completion.",
            4096,
            3350,
            id="openai",
        ),
        pytest.param(
            "'max_tokens' or 'max_completion_tokens' is too large: 948. This model's maximum "
            "context length is 4096 tokens and your request has 3350 input tokens "
            "(948 > 4096 - 3350).",
            4096,
            3350,
            id="vllm",
        ),
        pytest.param(
            "Error code: 400 - {'error': {'code': 400, 'message': 'the request exceeds the "
            "available context size, try increasing it', 'type': 'exceed_context_size_error', "
            "'n_prompt_tokens': 2512, 'n_ctx': 2048}}",
            2048,
            2512,
            id="llama.cpp",
        ),
        pytest.param("context length exceeded", None, None, id="no-number"),
    ],
)
def test_a_refusal_names_the_window_and_the_prompt(message, window, prompt) -> None:
    refusal = read_refusal(message)
    assert refusal is not None
    assert (refusal.window, refusal.prompt_tokens) == (window, prompt)


@pytest.mark.parametrize(
    "message",
    ["Incorrect API key provided", "Invalid value for 'temperature': 4096", "scripted fault 400"],
)
def test_other_errors_are_no_refusal(message) -> None:
    assert read_refusal(message) is None


# --- proposals against a strict server -------------------------------------------------------


def setup_with(max_context: int | None, max_tokens: int) -> ProposalSetup:
    return ProposalSetup(
        problem=PROBLEM,
        prompts=PromptConfig(max_context=max_context),
        temperature=0.7,
        max_tokens=max_tokens,
        retry=RetryPolicy(max_attempts=1),
        models=(FAKE,),
    )


def ask_many(setup: ProposalSetup, server: OpenAIServer, n: int, parent_chars: int = 3000):
    spec = ModelSpec(FAKE, api_base=server.url)

    async def go():
        out = []
        for seq in range(n):  # one after the other: each learns from the ones before
            context = big_context(parent_artifact_chars=parent_chars + 97 * seq)
            out.append(await propose(setup, ProposalRequest(seq, context, spec, seq, (seq,))))
        return out

    return asyncio.run(go())


def sent_sizes(server: OpenAIServer) -> list[tuple[int, int]]:
    """(prompt tokens as the server counts them, max_tokens) of each chat request."""
    return [
        (server.prompt_tokens(r.body["messages"]), r.body["max_tokens"])
        for r in server.chat_requests()
    ]


@pytest.mark.parametrize("tokenize", [None, "llama.cpp", "vllm"])
def test_no_request_goes_over_a_denser_servers_window(tokenize) -> None:
    """15 % denser than tiktoken, a 4k window, answers of 1024: every request fits as the
    server counts it, and keeps the configured answer budget."""
    window, answer = 4096, 1024
    with OpenAIServer(window=window, density=DENSE, tokenize=tokenize) as server:
        proposals = ask_many(setup_with(window, answer), server, 6)
        sizes = sent_sizes(server)
        refused = server.refused
        tokenized = [r for r in server.replies if r.request.path == "/tokenize" and r.status == 200]
        probes = [r for r in server.requests if r.path == "/tokenize"]
    assert refused == 0
    assert all(p.failure is None for p in proposals)
    assert len(sizes) == 6
    for prompt, max_tokens in sizes:
        assert max_tokens == answer
        assert prompt + max_tokens <= window
    assert bool(tokenized) == (tokenize is not None)
    if tokenize is None:  # probed once, a 404, and not asked again
        assert [r.path for r in probes] == ["/tokenize"]
    facts = _calibration.learned(ModelSpec(FAKE, api_base=server.url))
    assert facts.ratio is not None and facts.ratio == pytest.approx(DENSE, rel=0.05)


def test_the_answer_gets_what_the_window_leaves_in_the_servers_tokens() -> None:
    """max_tokens (4096) larger than a 4k window allows: the answer gets the window less the
    prompt as the server counts it (less the margin), and the request fits."""
    window = 4096
    with OpenAIServer(window=window, density=DENSE) as server:
        proposals = ask_many(setup_with(window, 4096), server, 4)
        sizes = sent_sizes(server)
        refused = server.refused
    assert refused == 0 and all(p.failure is None for p in proposals)
    for prompt, max_tokens in sizes:
        assert max_tokens < 4096
        assert prompt + max_tokens <= window
        assert prompt + max_tokens >= window - 2 * margin_tokens(window) - 0.1 * prompt


def test_a_smaller_window_than_told_is_learned_from_one_refusal() -> None:
    """Told 8192, the server holds 2048: the first request is refused, the prompt is fitted to
    2048 and sent again; every later one fits at once. The refusal stays in the attempts."""
    with OpenAIServer(window=2048, density=DENSE) as server:
        proposals = ask_many(setup_with(8192, 512), server, 5, parent_chars=500)
        sizes = sent_sizes(server)
        refused = server.refused
    assert refused == 1
    assert all(p.failure is None for p in proposals)
    first = proposals[0].completion
    assert first is not None
    assert [a.kind for a in first.attempts] == ["bad_request"]
    assert "maximum context length is 2048" in first.attempts[0].message
    assert all(p.completion is not None and not p.completion.attempts for p in proposals[1:])
    assert all(prompt + max_tokens <= 2048 for prompt, max_tokens in sizes[1:])
    assert _calibration.learned(ModelSpec(FAKE, api_base=server.url)).window == 2048


def test_a_refusal_is_retried_once_only() -> None:
    """A server that refuses whatever it is sent: two requests per proposal, not more."""
    with OpenAIServer(window=300, density=DENSE) as server:
        (proposal,) = ask_many(setup_with(8192, 512), server, 1, parent_chars=0)
        requests = len(server.chat_requests())
    assert requests <= 2
    assert proposal.failure is not None and proposal.failure.kind == "bad_request"


def test_what_a_worker_learned_merges_into_another() -> None:
    spec = ModelSpec(FAKE, api_base="http://127.0.0.1:9/v1")
    _calibration.learn_window(spec, 2048, "maximum context length is 2048 tokens")
    _calibration.learn_ratio(spec, 115, 100)
    facts = _calibration.snapshot()
    _calibration.forget()
    assert _calibration.merge(facts) is True
    assert _calibration.merge(facts) is False  # nothing new: nothing to pass on
    learned = _calibration.learned(spec)
    assert learned.window == 2048 and learned.ratio == pytest.approx(1.15)
    wider = dataclasses.replace(learned, window=4096, ratio=1.05)
    assert _calibration.merge([wider]) is False  # a larger window, a smaller ratio: no news


class _StubWorker:
    """What the pool's frame handler reads of a worker process."""

    def __init__(self) -> None:
        self.alive, self.stopping, self.sent = True, False, []

    def send(self, message) -> None:
        self.sent.append(message)


def test_the_pool_passes_what_one_worker_learned_to_the_others() -> None:
    """One refusal teaches every worker, not one refusal per worker: the pool forwards a
    worker's news to the others (not back), and only what is news."""
    from evoforge.evolve.proposals import ProposalPool

    pool = ProposalPool(setup_with(8192, 512), 3)
    learner, other, stopping = _StubWorker(), _StubWorker(), _StubWorker()
    stopping.stopping = True
    pool._workers = [learner, other, stopping]
    spec = ModelSpec(FAKE, api_base="http://127.0.0.1:9/v1")
    news = (_calibration.Learned(FAKE, spec.api_base, window=2048, window_source="refused"),)
    pool._handle(learner, ("learned", news))
    pool._handle(learner, ("learned", news))  # heard already: not passed on again
    assert learner.sent == [] and stopping.sent == []
    assert [kind for kind, _ in other.sent] == ["learned"]
    assert other.sent[0][1][0].window == 2048
    assert _calibration.learned(spec).window == 2048  # the controller's process knows it too


def test_what_a_run_stored_of_its_servers_is_restored_and_garbage_is_skipped() -> None:
    spec = ModelSpec("openai/small", api_base="http://127.0.0.1:9/v1")
    other = ModelSpec("openai/elsewhere")
    _calibration.learn_window(spec, 2048, "maximum context length is 2048 tokens")
    _calibration.learn_ratio(spec, 115, 100)
    _calibration.learn_ratio(other, 120, 100)
    stored = _calibration.stored_calibration([spec])  # only the run's own models
    assert [(s["model"], s["window"], s["ratio"]) for s in stored] == [(spec.model, 2048, 1.15)]
    _calibration.forget()
    hostile = [
        {"model": spec.model, "api_base": None, "window": -5},  # no window is negative
        {"model": spec.model, "api_base": None, "ratio": "dense"},
        {"window": 10},  # no model
        {"model": spec.model, "api_base": None, "surprise": 1},  # not a field
        "not a record",
    ]
    assert _calibration.restore_calibration(hostile) is False
    assert _calibration.restore_calibration(stored) is True
    assert _calibration.learned(spec).window == 2048
    assert _calibration.learned(spec).ratio == pytest.approx(1.15)
    assert _calibration.restore_calibration(stored) is False  # nothing new the second time
