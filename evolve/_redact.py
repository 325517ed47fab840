"""Key safety: API keys never reach an error message, the archive or a log record.

Provider errors sometimes quote the key they were sent ("Incorrect API key provided: sk-…"),
and debug logs print request headers. :func:`redact` removes two kinds of secret from a text:
the values of environment variables whose names look secret (so a key is caught whatever its
shape), and common key shapes (so a key that never passed through the environment is caught
too). :func:`install_log_redaction` applies it to the log records of evoforge, litellm and the
HTTP clients under it.
"""

from __future__ import annotations

import logging
import os
import re
import traceback

__all__ = ["REDACTED", "RedactingFilter", "install_log_redaction", "redact"]

REDACTED = "[REDACTED]"

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
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
        if len(value) >= _MIN_SECRET_LEN and _SECRET_NAME.search(name)
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED]``.

    Secrets are the values (8 characters or more) of environment variables whose names contain
    KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL or AUTH, and text shaped like a key:
    ``sk-…``, ``AIza…``, ``hf_…``, ``ghp_…``, ``Bearer …``, ``x-api-key: …``, ``api_key=…``.
    """
    for value in _secret_values():
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replacement in _SHAPES:
        text = pattern.sub(replacement, text)
    return text


class RedactingFilter(logging.Filter):
    """Redacts a record's message, arguments, traceback and stack before any handler sees it.

    The message is formatted here (``msg % args``) so that a key passed as an argument is
    caught; the traceback is formatted and stored as ``exc_text``, which formatters print
    instead of formatting ``exc_info`` again.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave the formatting error to logging
            return True
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


LOGGERS = ("evoforge", "LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai")
"""Loggers whose records are redacted: evoforge's, litellm's and the HTTP clients under it."""

_FILTER = RedactingFilter()


def install_log_redaction(names: tuple[str, ...] = LOGGERS) -> None:
    """Add :class:`RedactingFilter` to the loggers ``names`` and their existing children.

    A logger's filters apply only to records logged on that very logger, not to those its
    children propagate, so children that exist now get the filter too. Calling this again
    adds no second filter (and covers children created since).
    """
    manager = logging.Logger.manager
    for name in names:
        children = [
            child
            for child_name, child in list(manager.loggerDict.items())
            if child_name.startswith(name + ".") and isinstance(child, logging.Logger)
        ]
        for logger in (logging.getLogger(name), *children):
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
