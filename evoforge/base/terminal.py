"""Text safe for a terminal: control characters from candidates, evaluators and models made inert.

A candidate's exception, its output, its metrics' strings and a model's answer are stored as
they were, but printed through :func:`terminal_safe`: a terminal acts on control characters, and
an escape sequence in such text could write the user's clipboard (``ESC]52``), plant a
hyperlink (``ESC]8``), send device control strings (``ESC P``), move the cursor to overwrite
what was printed (CSI, backspace, carriage return), or do the same through the 8-bit C1 forms
(``0x9b`` is CSI, ``0x9d`` OSC, ``0x90`` DCS). Bidirectional overrides (U+202A-U+202E,
U+2066-U+2069) are treated alike: they reorder what the user reads (Trojan Source).

Every such character becomes its escape, written out (``\\x1b``), so the user still sees that
something was there; newline and tab stay, and a ``\\r\\n`` line end becomes ``\\n``.
"""

from __future__ import annotations

import logging
import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every C0/C1 control character but newline and tab written out as its escape.

    Idempotent on its own output (an escape is printable text), and the identity on text
    without control characters.
    """
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(_escape, text.replace("\r\n", "\n"))


class TerminalSafeFormatter(logging.Formatter):
    """A log formatter whose lines are :func:`terminal_safe` (a record may quote a candidate)."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record))
