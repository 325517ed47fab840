"""What a model's server teaches a run as it answers: its tokenizer and its real window.

Prompts are fitted with tiktoken's count (:func:`~evoforge.evolve.proposals._window.count_tokens`),
but a local model counts in its own tokens: SmolLM2's tokenizer makes about 10 % more of the
same prompt, and a 4k window then refuses (vLLM) or silently cuts (llama.cpp) prompts that
tiktoken said fit. So evoforge counts in the server's tokens, learned from, best first:

1. the server's tokenize endpoint (``POST /tokenize`` at the root of ``api_base``: llama.cpp
   answers ``{"tokens": [...]}`` to ``{"content": ...}``, vLLM ``{"count": n, ...}`` to
   ``{"model": ..., "prompt": ...}``), probed once per endpoint, its absence cached; a prompt
   that may be near the window is counted there before it is sent;
2. the ``usage`` of its answers (``prompt_tokens`` against tiktoken's count of the same
   messages), from the first :data:`MAX_SAMPLES` calls;
3. a refusal that says how large the prompt was (``3350 in the messages``).

Each gives a ratio, server tokens per tiktoken token; prompts are counted with tiktoken times
the largest ratio seen, plus :data:`RATIO_MARGIN` (prompts differ in their mix of code and
prose). Until a ratio is known a server's tokenizer is taken to be :data:`PRIOR_RATIO` times as
dense: the first prompts are a little smaller than they could be rather than refused.

A refusal that names the window (``maximum context length is 2048 tokens``,
:func:`~evoforge.evolve.models.read_refusal`) makes that the window for the rest of the run.

Everything learned is per model and endpoint, in the process that builds prompts. Proposal
workers are separate processes: a worker that learns something sends it to the pool, which
passes it to every other worker (and to the ones it starts later), so one refusal teaches all
of them, not one refusal per worker (:func:`snapshot`, :func:`merge`). The controller stores
what was learned with the run (a ``model_learned`` event, :func:`stored_calibration`), and a resumed
run starts from it: a small window is not refused into again after every resume.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evoforge.evolve.models import ModelSpec

log = logging.getLogger("evoforge")

PRIOR_RATIO = 1.25
"""Server tokens per tiktoken token assumed before any is learned (llama.cpp and vLLM models
seen so far: 1.0 to 1.15)."""
RATIO_MARGIN = 1.03
"""Added to the largest ratio seen: the ratio of one prompt is not quite that of the next."""
MAX_SAMPLES = 16
"""Answers whose ``usage`` is compared with tiktoken's count, per model and endpoint (each
costs a tiktoken count of the prompt, about a millisecond)."""
TOKENIZE_TIMEOUT_S = 5.0
"""How long a tokenize request may take; one that times out marks the endpoint absent."""

Key = tuple[str, str | None]


@dataclass(frozen=True)
class Learned:
    """What one model's server has shown of itself.

    Attributes:
        model, api_base: the model and endpoint it is of.
        window: the server's context window in tokens, from a refusal (None: not refused).
        window_source: the refusal's words, for messages that name where the window came from.
        ratio: the largest ratio seen of the server's tokens to tiktoken's (None: none yet).
        samples: how many ratios were seen.
    """

    model: str
    api_base: str | None
    window: int | None = None
    window_source: str = ""
    ratio: float | None = None
    samples: int = 0

    @property
    def key(self) -> Key:
        return (self.model, self.api_base)

    def merged(self, other: Learned) -> Learned:
        """Both together: the smaller window, the larger ratio (commutative, idempotent)."""
        window, source = self.window, self.window_source
        if other.window is not None and (window is None or other.window < window):
            window, source = other.window, other.window_source
        ratios = [r for r in (self.ratio, other.ratio) if r is not None]
        return replace(
            self,
            window=window,
            window_source=source,
            ratio=max(ratios) if ratios else None,
            samples=max(self.samples, other.samples),
        )


_learned: dict[Key, Learned] = {}
_lock = threading.Lock()
_version = 0


def key_of(spec: ModelSpec) -> Key:
    return (spec.model, spec.api_base)


def learned(spec: ModelSpec) -> Learned:
    """What is known of ``spec``'s server (nothing yet: an empty :class:`Learned`)."""
    with _lock:
        return _learned.get(key_of(spec)) or Learned(spec.model, spec.api_base)


def version() -> int:
    """Grows whenever something new is learned (a worker sends :func:`snapshot` then)."""
    return _version


def snapshot() -> tuple[Learned, ...]:
    """Everything learned in this process, to send to other processes."""
    with _lock:
        return tuple(_learned.values())


def merge(facts: Iterable[Learned]) -> bool:
    """Add what another process learned; whether anything here changed."""
    changed = False
    for fact in facts:
        changed |= _update(fact)
    return changed


def stored_calibration(specs: Iterable[ModelSpec]) -> list[dict[str, Any]]:
    """What is known of ``specs``' servers, as JSON values: the controller stores it with the
    run, so a resumed run starts from it (:func:`restore_calibration`)."""
    keys = {key_of(spec) for spec in specs}
    return [asdict(fact) for fact in snapshot() if fact.key in keys]


def restore_calibration(records: Iterable[Any]) -> bool:
    """Add what :func:`stored_calibration` wrote; whether anything changed. A record that is
    not one is skipped: what was learned is relearned from the server when lost, never
    trusted when unreadable."""
    facts = []
    for record in records:
        try:
            fact = Learned(**record)
        except TypeError:
            continue
        window_ok = fact.window is None or (isinstance(fact.window, int) and fact.window > 0)
        ratio_ok = fact.ratio is None or (isinstance(fact.ratio, int | float) and fact.ratio > 0)
        if isinstance(fact.model, str) and window_ok and ratio_ok:
            facts.append(fact)
    return merge(facts)


def forget() -> None:
    """Forget everything learned (tests; a new session in the same process)."""
    global _version
    with _lock:
        _learned.clear()
        _endpoints.clear()
        _version += 1


def _update(fact: Learned) -> bool:
    global _version
    with _lock:
        old = _learned.get(fact.key)
        new = fact if old is None else old.merged(fact)
        if new == old:
            return False
        _learned[fact.key] = new
        _version += 1
        return True


def learn_window(spec: ModelSpec, window: int, source: str) -> bool:
    """The server's window is ``window`` tokens (``source``: how it said so)."""
    changed = _update(Learned(spec.model, spec.api_base, window=window, window_source=source))
    if changed and learned(spec).window == window:
        log.warning(
            "%s: the server's context window is %d tokens (%s); prompts are fitted to it from "
            "now on. Pass --max-context %d (or max_context) to start there next time",
            spec.model,
            window,
            source,
            window,
        )
    return changed


def learn_ratio(spec: ModelSpec, server_tokens: int, our_tokens: int) -> bool:
    """The server counted ``server_tokens`` where tiktoken counted ``our_tokens``."""
    if server_tokens <= 0 or our_tokens <= 0:
        return False
    now = learned(spec)
    fact = Learned(
        spec.model, spec.api_base, ratio=server_tokens / our_tokens, samples=now.samples + 1
    )
    return _update(fact)


def wants_samples(spec: ModelSpec) -> bool:
    """Whether an answer's ``usage`` is still worth comparing with tiktoken's count."""
    return learned(spec).samples < MAX_SAMPLES


def ratio(spec: ModelSpec) -> float:
    """Server tokens per tiktoken token to count prompts with (never below 1: a server that
    counts fewer is trusted no further than tiktoken)."""
    seen = learned(spec).ratio
    if seen is None:
        return 1.0 if tokenizer_known(spec) else PRIOR_RATIO
    return max(1.0, seen) * RATIO_MARGIN


def on_prior(spec: ModelSpec) -> bool:
    """Whether prompts to ``spec`` are counted with :data:`PRIOR_RATIO`, nothing learned yet."""
    return learned(spec).ratio is None and not tokenizer_known(spec)


def tokenizer_known(spec: ModelSpec) -> bool:
    """Whether tiktoken is the model's own tokenizer (a hosted OpenAI model): no prior."""
    return spec.api_base is None and spec.model.startswith(("openai/", "gpt-"))


def scaled(count: int | None, spec: ModelSpec) -> int | None:
    """tiktoken's ``count`` in the server's tokens."""
    return None if count is None else math.ceil(count * ratio(spec))


# --- the server's tokenize endpoint ---------------------------------------------------------

_endpoints: dict[str, str | None] = {}  # tokenize URL -> "llama.cpp" | "vllm" | None (absent)
_client: Any = None


def tokenize_url(api_base: str | None) -> str | None:
    """Where ``api_base``'s server tokenizes: ``/tokenize`` at its root (``/v1`` dropped)."""
    if not api_base or not api_base.startswith(("http://", "https://")):
        return None
    root = api_base.rstrip("/").removesuffix("/v1").rstrip("/")
    return f"{root}/tokenize"


async def server_tokens(spec: ModelSpec, text: str) -> int | None:
    """``text``'s tokens as ``spec``'s server counts them, or None when it has no tokenize
    endpoint (found out once per endpoint: a 404, a refused connection or a timeout)."""
    url = tokenize_url(spec.api_base)
    if url is None or (url in _endpoints and _endpoints[url] is None):
        return None
    return await asyncio.to_thread(_tokenize, spec, url, text)


def _tokenize(spec: ModelSpec, url: str, text: str) -> int | None:
    import httpx

    global _client
    if _client is None:
        _client = httpx.Client(timeout=TOKENIZE_TIMEOUT_S)
    headers = {}
    try:
        key = spec.read_api_key()
    except Exception:  # noqa: BLE001 - no key: the call itself will say so
        key = None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    name = spec.model.split("/", 1)[1]
    forms = {"llama.cpp": {"content": text}, "vllm": {"model": name, "prompt": text}}
    known = _endpoints.get(url)
    for form in [known] if known else list(forms):
        try:
            reply = _client.post(url, json=forms[form], headers=headers)
        except httpx.HTTPError:
            _endpoints[url] = None
            return None
        if reply.status_code == 404:
            break
        count = _count(reply) if reply.is_success else None
        if count is not None:
            if url not in _endpoints:
                log.info("%s: prompts are counted by the server's tokenizer (%s)", spec.model, url)
            _endpoints[url] = form
            return count
    _endpoints[url] = None
    return None


def _count(reply: Any) -> int | None:
    try:
        body = reply.json()
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    count = body.get("count")
    tokens = body.get("tokens")
    if isinstance(count, int) and count > 0:
        return count
    if isinstance(tokens, Sequence) and tokens:
        return len(tokens)
    return None
