"""A candidate's warnings are the candidate's, not the user's.

Compiling a candidate (the syntax check's ``compile()``) or parsing it (``ast.parse``, for
its fingerprint) makes CPython warn about the candidate's own code: ``SyntaxWarning: invalid
escape sequence '\\d'`` and the like, printed to the stderr of whatever process compiled it,
the user's terminal. Those warnings describe the candidate: the sandbox that runs it compiles
it again and keeps them with its stderr, in the program's artifacts. So the engine's
processes (the CLI's, the proposal workers') ignore warnings raised while compiling source
with the names evoforge gives candidates (``<candidate>``) or none (``<unknown>``); evoforge's
own modules, compiled from files, still warn.
"""

from __future__ import annotations

import warnings

CANDIDATE_SOURCES = r"<(candidate|unknown)>\Z"
"""The module names CPython gives warnings about source compiled without a file name."""


def quiet_candidate_warnings() -> None:
    """Ignore SyntaxWarnings (and DeprecationWarnings of the same kind) about candidates'
    source in this process. Idempotent."""
    for category in (SyntaxWarning, DeprecationWarning):
        warnings.filterwarnings("ignore", category=category, module=CANDIDATE_SOURCES)
