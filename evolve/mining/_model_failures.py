"""The failed model calls of a run, grouped, with the fix where one is known.

A run whose models cannot be reached stores no failed *program*: each failed call is a row of
``llm_calls`` (:func:`~evoforge.evolve.models.record_failure`). This reads those rows back for
``evoforge failures`` and the dashboard, so "0 of 1 attempts failed" never hides 200 calls
refused for a missing key. :func:`failure_hint` is also the fix a run names when it stops on
a model error that repeats.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from evoforge.evolve.mining._failures import mask_numbers
from evoforge.evolve.mining._refusal import read_refusal

if TYPE_CHECKING:
    from evoforge.archive import LlmCall

# the words of ModelSpec.read_api_key (evoforge.evolve.models), which the client stores
_MISSING_KEY = re.compile(r"environment variable (\w+) \(its api_key_env\) is (not set|empty)")
_NO_KEY = "Missing credentials"  # the OpenAI SDK's words when no key was set
_KEY_VARIABLE = re.compile(r"\b([A-Z][A-Z0-9_]*_API_KEY)\b")
OFFLINE_HINT = "or run without these models: --model offline/mutator (the built-in offline model)"


@dataclass(frozen=True)
class ModelFailure:
    """Failed calls of one model with one kind of error and one message (numbers masked).

    Attributes:
        kind: the error kind (``auth``, ``not_found``, ``rate_limit``, ...).
        model: the litellm model string.
        message: the latest call's message (redacted when it was stored).
        count: how many calls failed so.
        first_seq: the attempt number of the first of them.
        hint: the likely fix, or "".
    """

    kind: str
    model: str
    message: str
    count: int
    first_seq: int
    hint: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def model_failures(calls: Iterable[LlmCall]) -> list[ModelFailure]:
    """The calls that failed for good (status ``error``; retried attempts are not counted
    twice), grouped; largest group first."""
    groups: dict[tuple[str, str, str], list[LlmCall]] = {}
    for call in calls:
        if call.status != "error":
            continue
        kind = call.error_kind or "other"
        key = (kind, call.model, mask_numbers(call.error or ""))
        groups.setdefault(key, []).append(call)
    out = [
        ModelFailure(
            kind=kind,
            model=model,
            message=rows[-1].error or "",
            count=len(rows),
            first_seq=rows[0].seq,
            hint=failure_hint(kind, rows[-1].error or ""),
        )
        for (kind, model, _), rows in groups.items()
    ]
    return sorted(out, key=lambda f: (-f.count, f.first_seq))


def failed_calls_summary(failures: list[ModelFailure]) -> dict[str, Any]:
    """``model_calls_failed`` (their count) and ``model_errors`` (the groups), as ``evoforge
    failures --json`` and the dashboard's failures page give them."""
    return {
        "model_calls_failed": sum(f.count for f in failures),
        "model_errors": [f.to_dict() for f in failures],
    }


def failure_hint(kind: str, message: str) -> str:
    """The fix for a model error that will not heal by itself; "" for the others."""
    missing = _MISSING_KEY.search(message)
    if missing:
        return f"missing credentials: export {missing.group(1)}=<your key>, {OFFLINE_HINT}"
    if kind == "auth" and _NO_KEY in message:
        variable = _KEY_VARIABLE.search(message)
        name = variable.group(1) if variable else "the provider's key variable (OPENAI_API_KEY…)"
        return (
            f"no key was set: export {name}=<your key>; a local server (api_base set) takes "
            f"any key, e.g. {name}=anything; {OFFLINE_HINT}"
        )
    if kind == "auth":
        return f"the provider refused the key: check it and api_base, {OFFLINE_HINT}"
    if kind == "not_found":
        return f"unknown model or provider: check the model string and api_base, {OFFLINE_HINT}"
    if kind == "bad_request":
        refusal = read_refusal(message)
        if refusal is not None and refusal.window is not None:
            return (
                f"the server's context window is {refusal.window} tokens: pass --max-context "
                f"{refusal.window} (max_context) with a --max-tokens that leaves room for the "
                "prompt, or start the server with a larger window"
            )
        if refusal is not None:
            return (
                "the prompt does not fit the server's context window: pass the window the "
                "server was started with as --max-context (max_context), or start it with a "
                "larger one"
            )
        if "Error" in message:  # the server's refusal (a prompt too large says its own fix)
            return (
                "the server refuses the request as evoforge makes it: check the model "
                "string, api_base and the settings the message names (max_tokens, "
                "temperature, ...)"
            )
    return ""
