"""Syntax highlighting with Pygments: HTML in which every character of the text is escaped.

Pygments writes each token's text through its own HTML escaping, so a candidate's source
holding ``</pre><script>`` comes out as text; the templates mark the result safe for that
reason only.
"""

from __future__ import annotations

from functools import cache

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer, PythonLexer

_CSS_CLASS = "hl"
MAX_HIGHLIGHT_CHARS = 400_000  # longer texts are shown plain (still escaped): Pygments is slow


@cache
def _formatter(linenos: bool) -> HtmlFormatter:
    return HtmlFormatter(cssclass=_CSS_CLASS, linenos="inline" if linenos else False, wrapcode=True)


def _plain(text: str) -> str:
    from markupsafe import escape

    return f'<div class="{_CSS_CLASS}"><pre><code>{escape(text)}</code></pre></div>'


def highlight_python(source: str) -> str:
    """``source`` as highlighted HTML, with line numbers."""
    if len(source) > MAX_HIGHLIGHT_CHARS:
        return _plain(source)
    return highlight(source, PythonLexer(), _formatter(True))


def highlight_diff(diff: str) -> str:
    """A unified diff as highlighted HTML."""
    if len(diff) > MAX_HIGHLIGHT_CHARS:
        return _plain(diff)
    return highlight(diff, DiffLexer(), _formatter(False))


def style_css() -> str:
    """The stylesheet for the highlighted HTML (Pygments' default style)."""
    return _formatter(False).get_style_defs(f".{_CSS_CLASS}")
