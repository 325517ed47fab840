"""Reading a model's answer: SEARCH/REPLACE blocks, Markdown fences, and their format errors.

Everything is line-based and linear in the size of the answer: no regular expressions, so a
hostile answer cannot trigger catastrophic backtracking.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from evoforge.evolve.checks import GRAMMAR_LANGUAGES, parses_as

MAX_BLOCKS = 64
"""Most SEARCH/REPLACE blocks accepted in one answer."""

_SEARCH, _REPLACE = "SEARCH", "REPLACE"

FORMAT_HINT = (
    "A valid answer has one or more SEARCH/REPLACE blocks (a line <<<<<<< SEARCH, lines of "
    "the current program copied exactly, a line =======, the lines that replace them, a line "
    ">>>>>>> REPLACE), or the whole new program in one fenced code block tagged with its "
    "language (```python for Python)."
)
"""Said after a format error. Prose, not a block to copy: it goes back to the model, and a
small model copies a template block literally (see :mod:`evoforge.evolve.prompts`)."""


class EditError(ValueError):
    """A model's answer cannot be applied; the message says why and what a valid one is."""


@dataclass(frozen=True)
class EditBlock:
    """One SEARCH/REPLACE block; both texts end with a newline unless empty."""

    number: int  # 1-based, in answer order
    search: str
    replace: str
    heading: str = ""  # the answer's last line of prose before the block (a file path?)


@dataclass(frozen=True)
class Fence:
    """A fenced code block of a Markdown text: its info-string tag and its content."""

    tag: str
    content: str
    line: int  # 0-based index of the opening fence line
    info: str = ""  # the whole info string, as written (```python slowstats/core.py)
    end: int = 0  # 0-based index of the closing fence line


def _marker(line: str, char: str, word: str) -> bool:
    """``<<<<<<< SEARCH`` / ``>>>>>>> REPLACE`` (5-9 marker characters, any spacing)."""
    text = line.strip()
    n = len(text) - len(text.lstrip(char))
    return 5 <= n <= 9 and text[n:].strip() == word


def _divider(line: str) -> bool:
    text = line.strip()
    return 5 <= len(text) <= 9 and text == "=" * len(text)


def is_format_line(line: str) -> bool:
    """Whether the answer parser would read ``line`` as a SEARCH, divider or REPLACE line."""
    return _marker(line, "<", _SEARCH) or _divider(line) or _marker(line, ">", _REPLACE)


def _fence_line(line: str, *, opening: bool) -> bool:
    """A Markdown fence line: ```` ``` ```` or ``~~~``, with a one-word tag when ``opening``."""
    text = line.strip()
    char = text[:1]
    if char not in ("`", "~") or not text.startswith(char * 3):
        return False
    rest = text.lstrip(char)
    if not rest:
        return True
    return opening and " " not in rest and "`" not in rest


def _section(lines: list[str]) -> str:
    """Join a block section's lines without the fence lines a model put at its edges.

    Models open a ```` ```python ```` fence right after ``<<<<<<< SEARCH`` or after
    ``=======``, and close it right before ``=======`` or ``>>>>>>> REPLACE``; either edge is
    dropped on its own. A program line that is itself a fence line at a section's edge (a
    Markdown text in a string) cannot be searched for at that edge: the one cost of this rule.
    """
    if lines and _fence_line(lines[0], opening=True):
        lines = lines[1:]
    if lines and _fence_line(lines[-1], opening=False):
        lines = lines[:-1]
    return "".join(line + "\n" for line in lines)


def _too_many_blocks() -> EditError:
    return EditError(
        f"the answer has more than {MAX_BLOCKS} SEARCH/REPLACE blocks; propose a focused "
        f"change with at most {MAX_BLOCKS} blocks, or answer with the whole program in one "
        "```python fenced block"
    )


def _fence_closed(replace: list[str]) -> int | None:
    """Where the REPLACE section of a block without its ``>>>>>>> REPLACE`` line ends, when
    the model closed the code fence it wrote the block in: the index of that closing fence
    line (the first bare fence line after the section's first line; code holds none), what
    follows being prose or the next block's opening fence. None without one: the answer may
    have been cut off, and a REPLACE text cut short is never applied."""
    first = next((i for i, line in enumerate(replace) if line.strip()), len(replace))
    for i in range(first + 1, len(replace)):
        if _fence_line(replace[i], opening=False):
            return i
    return None


def parse_blocks(lines: list[str]) -> list[EditBlock]:
    """The SEARCH/REPLACE blocks of an answer; prose and fences around them are ignored.

    Raises:
        EditError: a block is malformed (no divider, never closed, a stray REPLACE marker) or
            there are more than :data:`MAX_BLOCKS`.
    """
    blocks: list[EditBlock] = []
    state = "prose"
    search: list[str] = []
    replace: list[str] = []
    opened = 0
    heading = pending = ""
    for lineno, line in enumerate(lines, start=1):
        is_search = "<" in line and _marker(line, "<", _SEARCH)
        is_replace = ">" in line and _marker(line, ">", _REPLACE)
        number = len(blocks) + 1
        if state == "prose":
            if is_search:
                if number > MAX_BLOCKS:
                    raise _too_many_blocks()
                state, search, replace, opened = "search", [], [], lineno
                heading, pending = pending, ""
            elif is_replace:
                raise EditError(
                    f"answer line {lineno}: '>>>>>>> REPLACE' without a '<<<<<<< SEARCH' "
                    f"before it. {FORMAT_HINT}"
                )
            elif line.strip() and not _fence_line(line, opening=True):
                pending = line.strip()
        elif state == "search":
            if "=" in line and _divider(line):
                state = "replace"
            elif is_search or is_replace:
                raise EditError(
                    f"block {number} (answer line {opened}): its SEARCH section has no "
                    f"'=======' line before answer line {lineno}. {FORMAT_HINT}"
                )
            else:
                search.append(line)
        else:  # replace
            if is_replace:
                blocks.append(EditBlock(number, _section(search), _section(replace), heading))
                state = "prose"
            elif is_search:
                end = _fence_closed(replace)
                if end is None:
                    raise EditError(
                        f"block {number} (answer line {opened}): it is not closed with "
                        f"'>>>>>>> REPLACE' before the next SEARCH on answer line {lineno}. "
                        f"{FORMAT_HINT}"
                    )
                blocks.append(EditBlock(number, _section(search), _section(replace[:end]), heading))
                prose = [text.strip() for text in replace[end + 1 :] if text.strip()]
                prose = [text for text in prose if not _fence_line(text, opening=True)]
                if number + 1 > MAX_BLOCKS:
                    raise _too_many_blocks()
                state, search, replace, opened = "search", [], [], lineno
                heading = prose[-1] if prose else ""
            else:
                replace.append(line)
    if state == "replace" and (end := _fence_closed(replace)) is not None:
        blocks.append(
            EditBlock(len(blocks) + 1, _section(search), _section(replace[:end]), heading)
        )
        state = "prose"
    if state != "prose":
        raise EditError(
            f"block {len(blocks) + 1} (answer line {opened}): it is never closed with "
            f"'>>>>>>> REPLACE' (was the answer cut off?). {FORMAT_HINT}"
        )
    return blocks


def fenced_blocks(lines: list[str]) -> list[Fence]:
    """Fenced code blocks (``` or ~~~, CommonMark closing rule) in order; unclosed ones dropped."""
    fences: list[Fence] = []
    i, n = 0, len(lines)
    while i < n:
        text = lines[i].strip()
        char = text[:1]
        if char in ("`", "~") and text.startswith(char * 3):
            width = len(text) - len(text.lstrip(char))
            tag = text[width:].strip().split(" ", 1)[0].lower() if text[width:].strip() else ""
            if char == "`" and "`" in text[width:]:
                i += 1  # an inline code span, not a fence
                continue
            for j in range(i + 1, n):
                close = lines[j].strip()
                if close.startswith(char * width) and close == char * len(close):
                    body = "".join(line + "\n" for line in lines[i + 1 : j])
                    info = text[width:].strip()
                    fences.append(Fence(tag=tag, content=body, line=i, info=info, end=j))
                    i = j
                    break
            else:
                return fences  # unclosed: the rest is not a code block we can trust
        i += 1
    return fences


# --- the rewrite's code --------------------------------------------------------------------

_LANGUAGE_TAGS: dict[str, frozenset[str]] = {
    "python": frozenset({"python", "py", "python3", "py3"}),
    # Models tag C as C++ and back; either is code of the program's family.
    "c": frozenset({"c", "h", "cpp", "c++"}),
    "cpp": frozenset({"cpp", "c++", "cc", "cxx", "hpp", "hh", "h", "c"}),
    "cu": frozenset({"cu", "cuda", "cpp", "c++"}),
    "cuda": frozenset({"cu", "cuda", "cpp", "c++"}),
    "rs": frozenset({"rs", "rust"}),
    "rust": frozenset({"rs", "rust"}),
}
NOT_CODE_TAGS = frozenset(
    {
        *("text", "txt", "plaintext", "plain", "markdown", "md", "rst", "output", "log"),
        *("json", "jsonc", "yaml", "yml", "toml", "ini", "cfg", "csv", "xml", "html"),
        *("bash", "sh", "shell", "zsh", "console", "terminal", "shell-session", "sh-session"),
        *("diff", "patch"),
    }
)
"""Fence tags that never hold a program: such a fence is never applied as a rewrite (a
``diff`` fence counts only when it holds SEARCH/REPLACE blocks, which are read before any
fence)."""


def rewrite_code(lines: list[str], language: str) -> str:
    """The program an answer without SEARCH/REPLACE blocks sends: its last code fence.

    Only code is code. A fence tagged with the program's language (or a close one: ``py``,
    ``cpp`` for C) is the program; a fence tagged with anything else (``text``, ``json``,
    ``bash``, ``python`` for a C program, ...) never is; an untagged fence is the program
    only when it parses as ``language`` (CPython for Python, tree-sitter for C and C++; a
    language without a grammar here takes it as before), so prose in a bare fence is not
    evaluated as code. For a language not listed above, only the :data:`NOT_CODE_TAGS` are
    refused: its models' tags are not known here.

    Raises:
        EditError: no fence can be the program; the message says what each fence was and
            how to send the program.
    """
    fences = fenced_blocks(lines)
    if not fences:
        raise EditError(
            f"the answer has no SEARCH/REPLACE block and no fenced code block. {FORMAT_HINT}"
        )
    own = _LANGUAGE_TAGS.get(language, frozenset({language}))
    tagged = [fence for fence in fences if fence.tag in own]
    if tagged:
        return tagged[-1].content
    known = language in _LANGUAGE_TAGS  # else any tag but NOT_CODE_TAGS may be its own
    maybe = [f for f in fences if not f.tag or (not known and f.tag not in NOT_CODE_TAGS)]
    problems = []
    for fence in reversed(maybe):
        if fence.tag or language not in GRAMMAR_LANGUAGES:
            return fence.content
        problem = parses_as(fence.content, language)
        if problem is None:
            return fence.content
        problems.append(problem)
    return _no_code(fences, problems[0] if problems else None, language)  # the last fence's


def _no_code(fences: list[Fence], problem: str | None, language: str) -> NoReturn:
    """Raise the refusal of an answer none of whose ``fences`` is a program."""
    tags = sorted({fence.tag for fence in fences if fence.tag})
    described = []
    if tags:
        described.append(f"tagged {', '.join(tags)}")
    if problem is not None:
        described.append(f"untagged and not {language} ({problem})")
    if len(fences) == 1:
        which, verdict = "only code fence is", "it is not taken as the program"
    else:
        which, verdict = f"{len(fences)} code fences are", "none is taken as the program"
    raise EditError(
        f"the answer's {which} {' or '.join(described)}: {verdict}; put the whole program "
        f"in a ```{language} fence, or answer with SEARCH/REPLACE blocks"
    )
