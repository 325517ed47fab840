"""A fake OpenAI-compatible chat server on 127.0.0.1, for tests of the model transport.

It is a real HTTP server, so tests exercise litellm, the OpenAI SDK and httpx exactly as a
remote provider would, with faults scripted by the test instead of the network.

In-process (a ``ThreadingHTTPServer`` in a thread)::

    with OpenAIServer(faults=["429:2", "500", "ok"]) as server:
        await litellm.acompletion(model="openai/gpt-4o-mini", api_base=server.url, ...)
        server.requests  # every request: path, headers, JSON body

As a subprocess, so that CLI tests can kill it and restart it on the same port::

    python -m tests.evolve.openai_server --port 0 [--delay S] [--faults SPEC] [--cycle]
        [--echo-auth] [--ollama-context N] [--window N] [--density X] [--tokenize KIND]

prints ``READY http://127.0.0.1:<port>/v1`` on stdout and serves until SIGTERM or SIGINT.

Faults are a script of per-request behaviours, consumed in order (then ``ok`` forever), or
cycled with ``cycle=True`` / ``--cycle``. A SPEC is the same tokens joined by commas:

- ``ok``: answer normally.
- ``429``: rate limited, without a ``Retry-After`` header; ``429:N``: with ``Retry-After: N``.
- any other three-digit code (``500``, ``503``, ``401``, ``404``, ``400``…): that HTTP error,
  with an OpenAI-shaped error body.
- ``drop``: close the connection without a reply.
- ``delay:S``: wait S seconds, then answer normally.
- ``empty``: answer with empty text.
- ``thinking``: a reasoning model cut off while it thought: empty text, its thinking in
  ``reasoning_content`` (as vLLM's reasoning parser and DeepSeek send it), ``finish_reason``
  ``length``.
- ``nousage``: answer normally but leave ``usage`` out.

A strict server with a window of its own (``window=``, a vLLM or llama.cpp started with a
smaller window than the run is told) counts every prompt in its own tokens (tiktoken's count
times ``density``: a local model's tokenizer is denser than tiktoken) and refuses a request
whose prompt and ``max_tokens`` do not fit, with a 400 in OpenAI's words (``This model's
maximum context length is N tokens. However, you requested ...``); ``server.refused`` counts
those. ``tokenize="llama.cpp"`` or ``"vllm"`` serves that server's ``POST /tokenize`` (in the
same tokens); ``usage`` then reports the server's count too.

The default answer is what evoforge's offline mutation model proposes for the program after the
prompt's :data:`evoforge.evolve.offline._mutator.CURRENT_PROGRAM_HEADING` (its fenced block), seeded
from the request's ``seed`` and a hash of the messages, wrapped in some prose as a real model would
write it; so a run against this server improves scores as offline runs do. ``answer=`` replaces it
with a fixed text or a function of the request body.

``server.replies`` says what each request got (status, or None for ``drop``) and when, so a
test can check that a client waited what ``Retry-After`` asked before trying again.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evoforge.evolve.offline import mutate
from evoforge.evolve.offline._prompt import call_rng, message_text, read_prompt
from evoforge.evolve.prompts import CURRENT_PROGRAM_HEADING
from tests.evolve.server_faults import Fault, Reply, Request, parse_faults

MODELS = ("gpt-4o-mini", "evoforge-fake")
"""Model ids listed by ``GET /v1/models`` (any model name is answered)."""

TOKENIZER_MODEL = "openai/evoforge-fake"
"""Whose tiktoken count a strict server's count is ``density`` times: the one evoforge counts
an unknown model's prompts with."""

Answer = str | Callable[[dict[str, Any]], str]
_POLL_S = 0.05  # how soon serve_forever notices stop(): tests stop a server each

_CHAT_ROUTES = ("/v1/chat/completions", "/api/chat", "/api/generate")
OLLAMA_DEFAULT_NUM_CTX = 2048
"""The window Ollama gives a request that sets no ``num_ctx`` (its long-standing default; newer
servers use 4096 or ``OLLAMA_CONTEXT_LENGTH``): what the model sees of a longer prompt."""

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_exceeded",
}


# --- the default answerer --------------------------------------------------------------------


def offline_answer(body: dict[str, Any]) -> str:
    """The offline model's edit for the prompt in ``body``, in a real model's prose."""
    messages = body.get("messages") or []
    program, inspirations = read_prompt(messages)
    if program is None:
        return (
            "I could not find the program to improve: I expected a line starting with "
            f"{CURRENT_PROGRAM_HEADING!r} followed by a fenced code block."
        )
    edit = mutate(program, inspirations, call_rng(messages, body.get("seed")))
    return (
        "Looking at the current program, one focused change seems worth trying.\n\n"
        f"{edit}\n"
        "Everything outside the EVOLVE-BLOCK stays as it was."
    )


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


# --- the server ------------------------------------------------------------------------------


class OpenAIServer:
    """``POST /v1/chat/completions`` and ``GET /v1/models`` on 127.0.0.1 (see module doc).

    Args:
        answer: fixed answer text, or a function of the request body; None: the offline
            model's edit (:func:`offline_answer`).
        faults: per-request behaviours (tokens or :class:`Fault`), in order; then ``ok``.
        cycle: repeat ``faults`` forever instead of consuming them once.
        delay_s: wait this long before every answer (a slow model).
        port: 0 picks a free port; a fixed one lets a test restart the server where it was.
        api_key: when set, a request without ``Authorization: Bearer <api_key>`` gets a 401
            whose message quotes the key it received (as careless providers do).
        echo_auth: every error body (scripted faults included) quotes the key of the
            request's ``Authorization: Bearer`` header, bare, as careless providers and
            proxies do, so that tests can check that a key sent back never reaches the
            archive or the logs.
        ollama_context: the trained context length Ollama's ``POST /api/show`` reports (its
            ``model_info``); None: ``/api/show`` is a 404, as on a server that is not Ollama.
            ``POST /api/chat`` and ``/api/generate`` (Ollama's own routes, of litellm's
            ``ollama_chat/`` and ``ollama/``) answer either way, as Ollama does:
            a prompt longer than the request's ``options.num_ctx`` (Ollama's default, 2048,
            when it sends none) loses its beginning, silently; ``server.truncated`` counts
            such requests.
        window: refuse (400, OpenAI's words) a request whose prompt and ``max_tokens``
            together are more tokens than this; ``refused`` counts them.
        density: the server's tokens per tiktoken token (1.15: 15 % denser than tiktoken);
            with it, ``usage`` reports the server's own count. Default 1.0 with a window.
        tokenize: serve ``POST /tokenize`` as ``"llama.cpp"`` (``{"content"}`` ->
            ``{"tokens"}``) or ``"vllm"`` (``{"model", "prompt"}`` -> ``{"count", ...}``).
    """

    def __init__(
        self,
        *,
        answer: Answer | None = None,
        faults: str | Sequence[str | Fault] | None = None,
        cycle: bool = False,
        delay_s: float = 0.0,
        port: int = 0,
        api_key: str | None = None,
        echo_auth: bool = False,
        ollama_context: int | None = None,
        window: int | None = None,
        density: float | None = None,
        tokenize: str | None = None,
    ) -> None:
        script = [
            f if isinstance(f, Fault) else Fault.parse(f)
            for f in (parse_faults(faults) if isinstance(faults, str) else faults or [])
        ]
        self._faults: Iterator[Fault] = (
            itertools.cycle(script) if cycle and script else iter(script)
        )
        self.answer = answer
        self.delay_s = delay_s
        self.api_key = api_key
        self.echo_auth = echo_auth
        self.ollama_context = ollama_context
        self.truncated = 0
        self.window = window
        self.density = density if density is not None else (1.0 if window else None)
        self.tokenize = tokenize
        self.refused = 0
        self.requests: list[Request] = []
        self.replies: list[Reply] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd = _HTTPServer(("127.0.0.1", port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """The ``api_base`` to give litellm: ``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_requests(self) -> list[Request]:
        """The requests to ``/v1/chat/completions`` or Ollama's ``/api/chat``, in arrival
        order."""
        with self._lock:
            return [r for r in self.requests if r.path.rstrip("/") in _CHAT_ROUTES]

    def start(self) -> OpenAIServer:
        """Serve in a daemon thread; returns self."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": _POLL_S},
            name="fake-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until :meth:`stop` (or a signal) ends it."""
        try:
            self._httpd.serve_forever(poll_interval=_POLL_S)
        finally:
            self._close()

    def stop(self) -> None:
        """Stop serving, cut open connections and free the port."""
        self._stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._close()

    def _close(self) -> None:
        self._stopping.set()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:  # idle keep-alive connections would otherwise linger
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._httpd.server_close()

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- called by the handler ----------------------------------------------------------------

    def text_tokens(self, text: str) -> int:
        """``text``'s tokens in this server's tokenizer (tiktoken's times ``density``)."""
        from evoforge.evolve.models import load_litellm

        ours = load_litellm().token_counter(model=TOKENIZER_MODEL, text=text)
        return math.ceil(ours * (self.density or 1.0))

    def prompt_tokens(self, messages: list[Any]) -> int | None:
        """The prompt's tokens as this server counts them (its chat template included);
        None when it has no tokenizer of its own (``density`` unset)."""
        if self.density is None:
            return None
        from evoforge.evolve.models import load_litellm

        ours = load_litellm().token_counter(model=TOKENIZER_MODEL, messages=messages)
        return math.ceil(ours * self.density)

    def _next_fault(self) -> Fault:
        with self._lock:
            return next(self._faults, Fault("ok"))

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def _replied(self, request: Request, status: int | None) -> None:
        with self._lock:
            self.replies.append(Reply(request, status, time.monotonic()))

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)  # returns at once when the server stops

    def _answer_text(self, body: dict[str, Any]) -> str:
        if self.answer is None:
            return offline_answer(body)
        if isinstance(self.answer, str):
            return self.answer
        return self.answer(body)


class _HTTPServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up before its answer (a cancelled call, a run that ended) is
        # ordinary here; anything else is a bug in this server and keeps its traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler_for(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        owner = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    owner: OpenAIServer
    protocol_version = "HTTP/1.1"  # keep-alive, as real providers serve the SDK
    # Headers and body are two writes: with Nagle's algorithm the body would wait for the
    # client's delayed ACK of the headers (40 ms on Linux) on every answer.
    disable_nagle_algorithm = True
    request: Request  # the one being answered (set before any reply)

    def setup(self) -> None:
        super().setup()
        with self.owner._lock:
            self.owner._connections.add(self.connection)

    def finish(self) -> None:
        with self.owner._lock:
            self.owner._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass  # the client went away first

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests read server.requests instead

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.request = Request("GET", self.path, self._headers(), None, time.monotonic())
        self.owner._record(self.request)
        if self.path.rstrip("/") != "/v1/models":
            self._error(404, f"no route GET {self.path}")
            return
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "evoforge"} for m in MODELS]
        self._json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = None
        self.request = Request("POST", self.path, self._headers(), body, time.monotonic())
        self.owner._record(self.request)
        route = self.path.rstrip("/")
        if route == "/tokenize" and self.owner.tokenize is not None:
            self._tokenize(body)
            return
        if route == "/api/show" and self.owner.ollama_context is not None:
            self._json(200, _ollama_show(self.owner.ollama_context))
            return
        if route not in _CHAT_ROUTES:
            self._error(404, f"no route POST {self.path}")
            return
        if route == "/api/generate" and isinstance(body, dict):  # one prompt, not messages
            body = {**body, "messages": [{"role": "user", "content": str(body.get("prompt"))}]}
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._error(400, "the body must be a JSON object with a 'messages' list")
            return
        if self.owner.api_key is not None:
            sent = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
            if sent != self.owner.api_key:
                self._error(401, f"Incorrect API key provided: {sent or '(none)'}.")
                return
        fault = self.owner._next_fault()
        self.owner._wait(self.owner.delay_s + fault.delay_s)
        if fault.kind == "drop":
            self.close_connection = True  # no status line, no body: the client sees EOF
            self.owner._replied(self.request, None)
            return
        if fault.kind == "status":
            self._error(fault.status, f"scripted fault {fault.status}", fault.retry_after)
            return
        if body.get("stream"):
            self._error(400, "this fake server does not stream; call without stream=True")
            return
        prompt_tokens = self.owner.prompt_tokens(body["messages"])
        if self.owner.window is not None and prompt_tokens is not None:
            asked = prompt_tokens + int(body.get("max_tokens") or 0)
            if asked > self.owner.window:
                with self.owner._lock:
                    self.owner.refused += 1
                self._error(
                    400,
                    f"This model's maximum context length is {self.owner.window} tokens. "
                    f"However, you requested {asked} tokens ({prompt_tokens} in the messages, "
                    f"{body.get('max_tokens')} in the completion). Please reduce the length "
                    "of the messages or completion.",
                )
                return
        text = "" if fault.kind in ("empty", "thinking") else self.owner._answer_text(body)
        if route in ("/api/chat", "/api/generate"):
            self._json(200, self._ollama_answer(route, body, text))
            return
        usage = fault.kind != "nousage"
        payload = _completion(body, text, usage=usage, prompt_tokens=prompt_tokens)
        if fault.kind == "thinking":
            choice = payload["choices"][0]
            choice["message"]["reasoning_content"] = "Let me think about the loop. " * 40
            choice["message"]["content"] = ""
            choice["finish_reason"] = "length"
        self._json(200, payload)

    def _tokenize(self, body: Any) -> None:
        kind = self.owner.tokenize
        field = "content" if kind == "llama.cpp" else "prompt"
        if not isinstance(body, dict) or not isinstance(body.get(field), str):
            self._error(400, f"{kind}'s /tokenize takes a JSON object with {field!r}")
            return
        count = self.owner.text_tokens(body[field])
        if kind == "llama.cpp":
            self._json(200, {"tokens": list(range(count))})
        else:
            window = self.owner.window or 0
            self._json(200, {"count": count, "max_model_len": window, "tokens": []})

    def _ollama_answer(self, route: str, body: dict[str, Any], text: str) -> dict[str, Any]:
        options = body.get("options") or {}
        window = int(options.get("num_ctx") or OLLAMA_DEFAULT_NUM_CTX)
        prompt = _tokens("".join(message_text(m) for m in body["messages"]))
        if prompt > window:
            with self.owner._lock:
                self.owner.truncated += 1
        answer: dict[str, Any] = (
            {"message": {"role": "assistant", "content": text}}
            if route == "/api/chat"
            else {"response": text}
        )
        return {
            "model": str(body.get("model")),
            "created_at": "2026-01-01T00:00:00Z",
            **answer,
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": min(prompt, window),
            "eval_count": _tokens(text),
        }

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()  # sent before it is logged as sent
        self.owner._replied(self.request, status)

    def _error(self, status: int, message: str, retry_after: str | None = None) -> None:
        kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "api_error")
        if self.owner.echo_auth:
            sent = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
            message += f" (the key sent was {sent or '(none)'})"
        error = {"message": message, "type": kind, "param": None, "code": str(status)}
        headers = {"Retry-After": retry_after} if retry_after is not None else None
        self._json(status, {"error": error}, headers)


def _ollama_show(context: int) -> dict[str, Any]:
    """Ollama's ``/api/show`` for a model trained on ``context`` tokens (its shape, cut)."""
    return {
        "modelfile": "FROM fake",
        "parameters": 'stop "<|im_end|>"',
        "template": "{{ .Prompt }}",
        "details": {"family": "qwen2", "parameter_size": "1.5B"},
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": context},
    }


def _completion(
    body: dict[str, Any], text: str, *, usage: bool, prompt_tokens: int | None = None
) -> dict[str, Any]:
    prompt = "".join(message_text(m) for m in body["messages"] if isinstance(m, dict))
    payload: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model") or MODELS[0]),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
    }
    if usage:
        if prompt_tokens is None:
            prompt_tokens = _tokens(prompt)
        completion_tokens = _tokens(text) if text else 0
        payload["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
    return payload


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible chat server.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument("--faults", default=None, help="e.g. 429:2,500,drop,ok")
    parser.add_argument("--cycle", action="store_true", help="repeat the faults forever")
    parser.add_argument("--answer", default=None, help="a fixed answer text")
    parser.add_argument("--api-key", default=None, help="require this bearer key")
    parser.add_argument(
        "--echo-auth", action="store_true", help="quote the key received in error bodies"
    )
    parser.add_argument(
        "--ollama-context",
        type=int,
        default=None,
        help="serve Ollama's /api/show with this trained context length",
    )
    parser.add_argument("--window", type=int, default=None, help="refuse prompts over it")
    parser.add_argument("--density", type=float, default=None, help="tokens per tiktoken token")
    parser.add_argument("--tokenize", choices=["llama.cpp", "vllm"], default=None)
    args = parser.parse_args(argv)
    server = OpenAIServer(
        answer=args.answer,
        faults=args.faults,
        cycle=args.cycle,
        delay_s=args.delay,
        port=args.port,
        api_key=args.api_key,
        echo_auth=args.echo_auth,
        ollama_context=args.ollama_context,
        window=args.window,
        density=args.density,
        tokenize=args.tokenize,
    )
    return serve(server)


def serve(server: OpenAIServer) -> int:
    """Print ``READY <url>`` and serve until SIGTERM or SIGINT (the subprocess form)."""

    def _quit(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # leaves serve_forever's loop in this (the main) thread

    signal.signal(signal.SIGTERM, _quit)
    print(f"READY {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
