"""What the engine checks of a candidate's source before spending an evaluation on it.

Syntax (CPython's ``compile()`` for Python, tree-sitter for C and C++) and names (pyflakes: a
name read but defined nowhere, read before its assignment, or a function the fixed code calls
that the child dropped); and that the warnings CPython prints about a candidate's own code stay
out of the user's terminal. The lowest floor of :mod:`evoforge.evolve`: it imports nothing else
of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evolve.checks._names import (
        bindings as bindings,
        check_program_names as check_program_names,
        dynamic_names as dynamic_names,
        statement_lines as statement_lines,
    )
    from evoforge.evolve.checks._syntax import (
        GRAMMAR_LANGUAGES as GRAMMAR_LANGUAGES,
        check_program_syntax as check_program_syntax,
        check_syntax as check_syntax,
        clike_parser as clike_parser,
        parser as parser,
        parses_as as parses_as,
    )
    from evoforge.evolve.checks._warnings import (
        CANDIDATE_SOURCES as CANDIDATE_SOURCES,
        quiet_candidate_warnings as quiet_candidate_warnings,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
