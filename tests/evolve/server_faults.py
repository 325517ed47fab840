"""What the fake OpenAI server (:mod:`tests.evolve.openai_server`) records of each request and
the fault script that says how it answers them (SPEC tokens: see that module's docstring)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Request:
    """One request as the server received it (header names lower-cased; ``received_s`` is
    ``time.monotonic()`` when its body had been read)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    received_s: float = 0.0


@dataclass(frozen=True)
class Reply:
    """What the server did with one request: the HTTP status it sent (None: the connection
    was dropped without a reply) and ``time.monotonic()`` when it had sent it."""

    request: Request
    status: int | None
    sent_s: float


@dataclass(frozen=True)
class Fault:
    """One scripted behaviour: ``kind`` is ok, status, drop, delay, empty, thinking or
    nousage."""

    kind: str
    status: int = 200
    retry_after: str | None = None
    delay_s: float = 0.0

    @classmethod
    def parse(cls, token: str) -> Fault:
        """One SPEC token (see the module docstring); raises ValueError on an unknown one."""
        token = token.strip()
        head, _, arg = token.partition(":")
        if token in ("ok", "drop", "empty", "thinking", "nousage"):
            return cls(token)
        if head == "delay" and arg:
            return cls("delay", delay_s=float(arg))
        if head.isdigit() and len(head) == 3:
            return cls("status", status=int(head), retry_after=arg or None)
        raise ValueError(
            f"unknown fault {token!r}: expected ok, drop, empty, thinking, nousage, delay:S, "
            f"a status code such as 500, or 429:N (Retry-After N)"
        )


def parse_faults(spec: str | Iterable[str] | None) -> list[Fault]:
    """A comma-separated SPEC, or a sequence of tokens, as :class:`Fault` values."""
    if spec is None:
        return []
    tokens = spec.split(",") if isinstance(spec, str) else list(spec)
    return [Fault.parse(t) for t in tokens if t.strip()]
