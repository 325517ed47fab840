"""Secrets: what counts as one, and removing them from text.

Provider errors sometimes quote the key they were sent ("Incorrect API key provided: sk-…"),
debug logs print request headers, and a candidate can print its environment. :func:`redact`
removes two kinds of secret from a text: the values of environment variables whose names look
secret (so a key is caught whatever its shape), and common key shapes (so a key that never
passed through the environment is caught too). :data:`SECRET_NAME` is the one rule for which
variable names look secret, used by redaction and by the sandbox's environment filter alike.
"""

from __future__ import annotations

import os
import re

__all__ = ["REDACTED", "SECRET_NAME", "redact"]

REDACTED = "[REDACTED]"

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
"""Environment variable names whose values are secrets (``OPENAI_API_KEY``, ``GITHUB_TOKEN``,
``DB_PASSWORD``, ``AWS_SESSION_TOKEN``, …)."""
_MIN_SECRET_LEN = 8  # shorter values ("1", "true") would redact ordinary words
_SHAPES = [
    # name: value pairs in headers, JSON, query strings and keyword arguments; the name stays
    (
        re.compile(
            r"""(?P<name>(?:\b(?:x-api-key|x-goog-api-key|api[_-]?key|access[_-]?token|"""
            r"""authorization)\b|(?<=[?&])key)['"]?\s*[:=]\s*['"]?)"""
            r"""(?:Bearer\s+|Basic\s+)?(?P<value>[A-Za-z0-9._~+/=\-]{8,})""",
            re.IGNORECASE,
        ),
        rf"\g<name>{REDACTED}",
    ),
    (re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE), f"Bearer {REDACTED}"),
    # provider key shapes: OpenAI/Anthropic/DeepSeek (sk-…), Google (AIza…), Hugging Face
    # (hf_…), GitHub (ghp_…, github_pat_…), xAI (xai-…), Groq (gsk_…)
    (
        re.compile(
            r"\b(?:sk-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,}|hf_[A-Za-z0-9]{16,}|"
            r"gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|xai-[A-Za-z0-9]{16,}|"
            r"gsk_[A-Za-z0-9]{16,})"
        ),
        REDACTED,
    ),
]


def _secret_values() -> list[str]:
    """Values of secret-looking environment variables, longest first (read on every call,
    so keys set after start-up are covered)."""
    values = {
        value
        for name, value in os.environ.items()
        if len(value) >= _MIN_SECRET_LEN and SECRET_NAME.search(name)
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED]``.

    Secrets are the values (8 characters or more) of environment variables whose names contain
    KEY, TOKEN, SECRET, PASSW(ORD), CREDENTIAL, AUTH, COOKIE or SESSION, and text shaped like a key:
    ``sk-…``, ``AIza…``, ``hf_…``, ``ghp_…``, ``Bearer …``, ``x-api-key: …``, ``api_key=…``.
    """
    for value in _secret_values():
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replacement in _SHAPES:
        text = pattern.sub(replacement, text)
    return text
