"""Key safety in logs: API keys never reach a log record of evoforge, litellm or the HTTP
clients under it (:func:`install_log_redaction`); the redaction itself is
:func:`evoforge.base.redaction.redact`, shared with error messages and the archive.
"""

from __future__ import annotations

import logging
import traceback

from evoforge.base.redaction import redact


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
