"""A deterministic model server that writes edits the way real models write them: sloppily.

Real models, greedy-decoded, answer the same prompt with the same text, and their
SEARCH/REPLACE blocks are often not byte-exact copies of the program: indentation dropped or
changed, tabs for spaces, trailing spaces, a context line misremembered, the block wrapped in a
```diff fence. This server reproduces both properties so that ``bench/search_quality.py`` (and
tests) can measure what tolerant edit matching, the novelty filter and the rest bring with a
model that behaves like that, offline and reproducibly.

The answer is a pure function of the request's messages (the ``seed`` and ``temperature`` are
ignored, as a greedy-decoding server ignores them), so two runs with different seeds differ
only through what the engine puts in the prompt. It is built in three steps:

1. the edit: what the offline mutation model (:func:`evoforge.evolve.offline.mutate`)
   proposes for the prompt's current program, drawn from a hash of the messages; applied to
   the program, then re-expressed as a SEARCH/REPLACE diff of the changed lines with one line
   of context on each side where there is one (:func:`diff_hunks`), as models write diffs;
2. the sloppiness: from a second hash of the messages, :data:`CORRECT_SHARE` of answers are
   written correctly; the others get one kind (three in four) or two kinds of :data:`KINDS`
   (:func:`choose_kinds`, :func:`render`);
3. prose around the blocks, as models write it.

Which kinds today's exact rules (exact text, trailing whitespace ignored, one uniform
indentation shift) still apply, and which they refuse, is :data:`BREAKS_EXACT`.

In-process, like :class:`tests.evolve.openai_server.OpenAIServer` (which it is)::

    with SloppyServer() as server:
        ...  # model "openai/sloppy", api_base server.url

As a subprocess::

    python -m tests.evolve.sloppy_server --port 0

prints ``READY http://127.0.0.1:<port>/v1`` on stdout and serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evoforge.evolve import EditError, apply_edit
from evoforge.evolve.checks import bindings, statement_lines
from evoforge.evolve.offline import call_rng, mutate, read_prompt
from evoforge.evolve.prompts import CURRENT_PROGRAM_HEADING
from evoforge.problems import END_MARKER, START_MARKER, BlockError, find_blocks
from tests.evolve.openai_server import OpenAIServer, serve

KINDS = (
    "no_indent",
    "indent_2",
    "tabs",
    "trailing_spaces",
    "diff_fence",
    "context_off",
    "unified_diff",
    "thinking",
    "labelled_fences",
    "elided_rewrite",
)
"""The ways an answer is written sloppily:

- ``no_indent``: every line of SEARCH and REPLACE written flush left;
- ``indent_2``: two spaces per indentation level instead of four, in SEARCH and REPLACE;
- ``tabs``: a tab per four spaces of indentation, in SEARCH and REPLACE;
- ``trailing_spaces``: two spaces after every SEARCH line;
- ``diff_fence``: each SEARCH/REPLACE block wrapped in a ```diff fence;
- ``context_off``: one line of SEARCH (a context line when there is one) misremembered: a
  word of its comment changed, or, without a comment, one space doubled;
- ``unified_diff``: the edit written as ``diff -u`` hunks in a ```diff fence (``--- a/`` and
  ``+++ b/`` headers, line numbers that are wrong), not as SEARCH/REPLACE blocks;
- ``thinking``: the answer opens with a reasoning model's ``<think>`` block, holding a draft
  SEARCH/REPLACE block whose SEARCH text is not in the program;
- ``labelled_fences``: no markers; each block is a ```python fence under a search label
  (``SEARCH:``, ``**Search:**``, ``Original code:``, ``Find:``) and another under a replace
  label (``REPLACE:``, ``**Replace with:**``, ``Updated code:``, ``Replace with:``);
- ``elided_rewrite``: no blocks; the whole child program in a ```python fence, each run of
  top-level statements of its EVOLVE-BLOCK that the edit left alone written as one elision
  line (``# ... unchanged ...``, ``...``): the lazy rewrite models send for a long program.
  It goes with ``thinking`` only (the other kinds are ways of writing blocks).
"""

CORRECT = "correct"
"""The kind of an answer written exactly (SEARCH copied byte for byte)."""

BREAKS_EXACT = frozenset({"no_indent", "indent_2", "tabs", "context_off"})
"""Kinds that exact matching refuses, for a SEARCH text whose lines are indented at two or
more levels (``no_indent``, ``indent_2``) or at all (``tabs``), and always (``context_off``).
The others (``trailing_spaces``, ``diff_fence``) exact matching already applies."""

CORRECT_SHARE = 0.3
"""Share of answers written correctly."""
TWO_KINDS_SHARE = 0.25
"""Share of the sloppy answers that combine two kinds (the rest have one)."""

_INDENT_KINDS = frozenset({"no_indent", "indent_2", "tabs"})  # at most one per answer
# how blocks are rendered: one at most
_FORM_KINDS = frozenset({"diff_fence", "unified_diff", "labelled_fences", "elided_rewrite"})
_REWRITE_KINDS = frozenset({"elided_rewrite", "thinking"})  # what a rewrite combines with
_THINKING_END = "\n</think>\n\n"
_INTROS = (
    "Looking at the current program, one focused change seems worth trying.",
    "Here is a small, targeted improvement.",
    "I'll make a minimal edit to the evolve block.",
    "Let's try adjusting the code slightly; the rest of the program stays as it is.",
)
_OUTROS = (
    "Everything outside the EVOLVE-BLOCK stays as it was.",
    "This should improve the score without breaking correctness.",
    "Let me know if you want me to explore a different direction.",
    "",
)


@dataclass(frozen=True)
class Hunk:
    """One SEARCH/REPLACE block as lines (without newlines).

    Attributes:
        search: the parent's lines to replace.
        replace: the lines that replace them.
        context: indices into ``search`` of lines that the edit keeps (context lines).
    """

    search: tuple[str, ...]
    replace: tuple[str, ...]
    context: tuple[int, ...]


@dataclass(frozen=True)
class SloppyAnswer:
    """What the server answers to one prompt, and how it was made.

    Attributes:
        text: the answer.
        kinds: the sloppiness kinds applied (``("correct",)`` for an exact answer).
        parent: the program read from the prompt (None: none was found).
        child: the program the edit means (None when there is no edit to make).
        hunks: the edit as written correctly (empty when there is none).
    """

    text: str
    kinds: tuple[str, ...]
    parent: str | None
    child: str | None
    hunks: tuple[Hunk, ...]


# --- the edit ----------------------------------------------------------------------------------


def _is_marker(line: str) -> bool:
    return START_MARKER in line or END_MARKER in line


def diff_hunks(parent: str, child: str) -> list[Hunk] | None:
    """The changed lines of ``child`` against ``parent``, as SEARCH/REPLACE hunks.

    Each run of changed lines gets one context line above and one below when those are
    non-blank code lines of the region (never an EVOLVE-BLOCK marker), as models write diffs,
    and is grown further while its SEARCH text is not unique in ``parent``.

    Returns:
        The hunks, top to bottom; None when one cannot be made unique inside its region.
    """
    a, b = parent.split("\n"), child.split("\n")
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    spans: list[list[int]] = []  # [i1, i2, j1, j2], merged when they touch
    for _, i1, i2, j1, j2 in changes:
        if spans and i1 <= spans[-1][1] + 2:
            spans[-1][1], spans[-1][3] = i2, j2
        else:
            spans.append([i1, i2, j1, j2])
    hunks = []
    for i1, i2, j1, j2 in spans:
        lo, hi = i1, i2  # the SEARCH lines are a[lo:hi]
        if lo > 0 and a[lo - 1].strip() and not _is_marker(a[lo - 1]):
            lo -= 1
        if hi < len(a) and a[hi].strip() and not _is_marker(a[hi]):
            hi += 1
        while not _unique(a, lo, hi):
            if lo > 0 and not _is_marker(a[lo - 1]):
                lo -= 1
            elif hi < len(a) and not _is_marker(a[hi]):
                hi += 1
            else:
                return None
        before, after = i1 - lo, hi - i2
        search = tuple(a[lo:hi])
        replace = tuple(a[lo:i1]) + tuple(b[j1:j2]) + tuple(a[i2:hi])
        context = tuple(range(before)) + tuple(range(len(search) - after, len(search)))
        hunks.append(Hunk(search, replace, context))
    return hunks


def _unique(lines: list[str], lo: int, hi: int) -> bool:
    if hi <= lo:
        return False  # an empty SEARCH matches everywhere
    needle = lines[lo:hi]
    width = hi - lo
    found = sum(1 for k in range(len(lines) - width + 1) if lines[k : k + width] == needle)
    return found == 1


# --- the sloppiness ----------------------------------------------------------------------------


def _leading(line: str) -> tuple[str, str]:
    body = line.lstrip(" \t")
    return line[: len(line) - len(body)], body


def _reindent(line: str, kind: str) -> str:
    indent, body = _leading(line)
    if not body:
        return line
    if kind == "no_indent":
        return body
    spaces = indent.replace("\t", "    ")
    levels, rest = divmod(len(spaces), 4)
    if kind == "indent_2":
        return "  " * levels + " " * rest + body
    return "\t" * levels + " " * rest + body  # tabs


def _misremember(line: str) -> str | None:
    """The line with a slightly changed comment, or one space doubled; None if neither."""
    code, sep, comment = line.partition("#")
    words = comment.split()
    if sep and len(words) >= 2:
        changed = " ".join(words[:-1]) if len(words) > 2 else " ".join(words) + " here"
        return f"{code}# {changed}"
    indent, body = _leading(line)
    at = body.find(" ")
    if at <= 0 or not body[at + 1 :].strip():
        return None
    return indent + body[:at] + "  " + body[at + 1 :]


def _context_off(hunk: Hunk, rng: np.random.Generator) -> Hunk | None:
    order = list(hunk.context) + [i for i in range(len(hunk.search)) if i not in hunk.context]
    start = int(rng.integers(len(hunk.context))) if hunk.context else 0
    for i in order[start:] + order[:start]:
        changed = _misremember(hunk.search[i])
        if changed is not None:
            search = hunk.search[:i] + (changed,) + hunk.search[i + 1 :]
            return Hunk(search, hunk.replace, hunk.context)
    return None


def sloppy_hunks(hunks: Sequence[Hunk], kinds: Sequence[str], rng: np.random.Generator):
    """``hunks`` as a model of the given ``kinds`` writes them (``diff_fence`` is rendering).

    ``context_off`` changes the first hunk it can change (a line with a comment or an inner
    space); a hunk with none stays exact.
    """
    out = list(hunks)
    for kind in kinds:
        if kind in _INDENT_KINDS:
            out = [
                Hunk(
                    tuple(_reindent(s, kind) for s in h.search),
                    tuple(_reindent(r, kind) for r in h.replace),
                    h.context,
                )
                for h in out
            ]
        elif kind == "trailing_spaces":
            out = [Hunk(tuple(s + "  " for s in h.search), h.replace, h.context) for h in out]
        elif kind == "context_off":
            for n, hunk in enumerate(out):
                changed = _context_off(hunk, rng)
                if changed is not None:
                    out[n] = changed
                    break
    return out


def render(hunks: Sequence[Hunk], *, fence: bool = False) -> str:
    """SEARCH/REPLACE blocks for ``hunks``, each wrapped in a ```diff fence if ``fence``."""
    parts = []
    for hunk in hunks:
        block = ["<<<<<<< SEARCH", *hunk.search, "=======", *hunk.replace, ">>>>>>> REPLACE"]
        if fence:
            block = ["```diff", *block, "```"]
        parts.append("\n".join(block))
    return "\n\n".join(parts)


_LABELS = (
    ("SEARCH:", "REPLACE:"),
    ("**Search:**", "**Replace with:**"),
    ("Original code:", "Updated code:"),
    ("Find:", "Replace with:"),
)


def render_labelled(hunks: Sequence[Hunk], labels: tuple[str, str]) -> str:
    """``hunks`` as pairs of ```python fences under ``labels`` (search's, replace's)."""
    parts = []
    for hunk in hunks:
        search = [labels[0], "```python", *hunk.search, "```"]
        parts.append("\n".join([*search, "", labels[1], "```python", *hunk.replace, "```"]))
    return "\n\n".join(parts)


_ELISIONS = (
    "# ... (unchanged) ...",
    "# ... rest of the code unchanged ...",
    "...",
    "# (other functions omitted for brevity)",
)


def render_elided(parent: str, child: str, elision: str) -> str:
    """``child`` in a ```python fence, each run of the top-level statements of its
    EVOLVE-BLOCK regions that the parent has, word for word, written as one ``elision`` line."""
    regions, old_regions = find_blocks(child), find_blocks(parent)
    pieces, previous = [], 0
    for new, old in zip(regions, old_regions, strict=True):
        content = child[new.start : new.end]
        pieces += [
            child[previous : new.start],
            _elided(parent[old.start : old.end], content, elision),
        ]
        previous = new.end
    return "```python\n" + "".join([*pieces, child[previous:]]) + "```"


def _elided(old: str, new: str, elision: str) -> str:
    """``new`` with each run of statements that define names and stand in ``old`` word for
    word (the lines between them too) written as ``elision``; only a run whose neighbours are
    written out and are, in ``old`` too, the statements right around it (or the region's
    edges), so that where the parent's code goes is no guess (a statement the edit deleted
    next to an elision would be read as elided: filled back)."""
    try:
        new_tree, old_tree = ast.parse(new), ast.parse(old)
    except SyntaxError:
        return new
    lines, old_lines = new.split("\n"), old.split("\n")
    spans = [statement_lines(node) for node in new_tree.body]
    old_spans = [statement_lines(node) for node in old_tree.body]
    at_old = {"\n".join(old_lines[a:b]): i for i, (a, b) in reversed(list(enumerate(old_spans)))}
    by_name: dict[str, int] = {}
    for i, node in enumerate(old_tree.body):
        for name in bindings([node]):
            by_name.setdefault(name, i)
    old_of: list[int | None] = []  # each new statement's counterpart in old: same text or name
    same: list[bool] = []
    for node, (first, last) in zip(new_tree.body, spans, strict=True):
        names = bindings([node]) & set(by_name)
        j = at_old.get("\n".join(lines[first:last])) if names else None
        same.append(j is not None)
        old_of.append(j if j is not None else min((by_name[n] for n in names), default=None))
    runs: list[list[int]] = []  # [first statement, past the last]
    for index, (_, last) in enumerate(spans):
        if not same[index]:
            continue
        if runs and runs[-1][1] == index and old_of[index] == old_of[index - 1] + 1:  # type: ignore[operator]
            start, old_start = spans[runs[-1][0]][0], old_spans[old_of[runs[-1][0]]][0]  # type: ignore[index]
            if lines[start:last] == old_lines[old_start : old_spans[old_of[index]][1]]:  # type: ignore[index]
                runs[-1][1] = index + 1
                continue
        runs.append([index, index + 1])
    anchored: list[tuple[int, int]] = []
    written_from = 0  # statements from here on are written out (none elided yet)
    for a, b in runs:
        j, k = old_of[a], old_of[b - 1]
        assert j is not None and k is not None
        before = j == 0 if a == 0 else a - 1 >= written_from and old_of[a - 1] == j - 1
        after = k == len(old_spans) - 1 if b == len(spans) else old_of[b] == k + 1
        if before and after:
            anchored.append((spans[a][0], spans[b - 1][1]))
            written_from = b + 1
    for first, last in reversed(anchored):
        lines[first:last] = [elision]
    return "\n".join(lines)


def render_unified(hunks: Sequence[Hunk], *, line: int = 1) -> str:
    """``hunks`` as a ```diff fence of ``diff -u`` hunks, each headed ``@@ -line,n +line,m @@``
    with a ``line`` that is made up (models count lines wrong)."""
    out = ["```diff", "--- a/program.py", "+++ b/program.py"]
    for hunk in hunks:
        matcher = difflib.SequenceMatcher(None, hunk.search, hunk.replace, autojunk=False)
        body = []
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                body += [f" {text}" for text in hunk.search[i1:i2]]
                continue
            body += [f"-{text}" for text in hunk.search[i1:i2]]
            body += [f"+{text}" for text in hunk.replace[j1:j2]]
        out.append(f"@@ -{line},{len(hunk.search)} +{line},{len(hunk.replace)} @@")
        out += body
        line += len(hunk.search) + 7
    return "\n".join([*out, "```"])


def choose_kinds(rng: np.random.Generator) -> tuple[str, ...]:
    """``("correct",)`` with probability :data:`CORRECT_SHARE`, else one or two kinds.

    The draw is made whatever the share, so a server with ``--correct-share 1`` (a clean
    writer) answers each prompt with the same edit as the sloppy one, only written cleanly.
    """
    if rng.random() < CORRECT_SHARE:
        return (CORRECT,)
    first = KINDS[int(rng.integers(len(KINDS)))]
    if rng.random() >= TWO_KINDS_SHARE:
        return (first,)
    pair = {first}
    others = [
        k
        for k in KINDS
        if k != first
        and not (k in _INDENT_KINDS and first in _INDENT_KINDS)
        and not (k in _FORM_KINDS and first in _FORM_KINDS)
        and not ("elided_rewrite" in pair | {k} and not pair | {k} <= _REWRITE_KINDS)
    ]
    second = others[int(rng.integers(len(others)))]
    return tuple(sorted((first, second), key=KINDS.index))


def write_sloppily(
    hunks: Sequence[Hunk],
    kinds: Sequence[str],
    rng: np.random.Generator,
    *,
    parent: str | None = None,
    child: str | None = None,
) -> str:
    """The blocks of ``hunks`` as a model of ``kinds`` writes them (no prose); for
    ``elided_rewrite``, the ``child`` of ``parent`` that they make, elided."""
    kinds = [k for k in kinds if k != CORRECT]
    written = sloppy_hunks(hunks, kinds, rng)
    if "elided_rewrite" in kinds:
        if parent is None or child is None:
            raise ValueError("an elided_rewrite is written from the parent and child programs")
        text = render_elided(parent, child, _ELISIONS[int(rng.integers(len(_ELISIONS)))])
    elif "unified_diff" in kinds:
        text = render_unified(written, line=int(rng.integers(1, 400)))
    elif "labelled_fences" in kinds:
        text = render_labelled(written, _LABELS[int(rng.integers(len(_LABELS)))])
    else:
        text = render(written, fence="diff_fence" in kinds)
    if "thinking" in kinds:
        first = hunks[0]
        draft = Hunk(tuple(f"{line}  # draft" for line in first.search), first.replace, ())
        text = (
            "<think>\nThe user wants one focused change. A first draft:\n"
            f"{render([draft])}\nNo, the SEARCH text must be copied exactly. Again."
            f"{_THINKING_END}{text}"
        )
    return text


# --- the answer --------------------------------------------------------------------------------


def _digest(messages: Sequence[dict[str, Any]], salt: str) -> int:
    data = json.dumps([salt, list(messages)], sort_keys=True, default=str).encode()
    return int.from_bytes(hashlib.sha256(data).digest()[:16], "little")


def sloppy_answer(messages: Sequence[dict[str, Any]]) -> SloppyAnswer:
    """The server's answer to ``messages`` (a pure function of them; see the module doc)."""
    program, inspirations = read_prompt(messages)
    if program is None:
        text = (
            "I could not find the program to improve: I expected a line starting with "
            f"{CURRENT_PROGRAM_HEADING!r} followed by a fenced code block."
        )
        return SloppyAnswer(text, (CORRECT,), None, None, ())
    proposal = mutate(program, inspirations, call_rng(messages, None))
    note = proposal.split("\n", 1)[0].removeprefix("Offline mutation: ").rstrip(".")
    try:
        child = apply_edit(program, proposal).source
    except (EditError, BlockError):
        return SloppyAnswer(proposal, (CORRECT,), program, None, ())  # says why there is no edit
    hunks = diff_hunks(program, child)
    rng = np.random.default_rng(_digest(messages, "sloppy"))
    kinds = choose_kinds(rng)
    if hunks is None or _exact(program, render(hunks)) != child:
        return SloppyAnswer(proposal, (CORRECT,), program, child, ())  # the mutator's own diff
    # a reasoning model's thinking opens the answer, before any prose
    written = write_sloppily(hunks, kinds, rng, parent=program, child=child)
    thinking, end, blocks = written.rpartition(_THINKING_END)
    intro = _INTROS[int(rng.integers(len(_INTROS)))]
    outro = _OUTROS[int(rng.integers(len(_OUTROS)))]
    text = f"{thinking}{end}{intro} The change: {note}.\n\n{blocks}\n"
    if outro:
        text += f"\n{outro}\n"
    return SloppyAnswer(text, kinds, program, child, tuple(hunks))


def _exact(parent: str, answer: str) -> str | None:
    try:
        return apply_edit(parent, answer).source
    except EditError:
        return None


def answer(body: dict[str, Any]) -> str:
    """The answer text for a chat request ``body`` (its ``seed`` and ``temperature`` unused)."""
    return sloppy_answer(body.get("messages") or []).text


class SloppyServer(OpenAIServer):
    """The fake OpenAI-compatible server answering with :func:`answer` (see module doc).

    Takes :class:`OpenAIServer`'s keyword arguments except ``answer``.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(answer=answer, **kwargs)


def main(argv: Sequence[str] | None = None) -> int:
    global CORRECT_SHARE
    parser = argparse.ArgumentParser(description="A deterministic, sloppy model server.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument(
        "--correct-share",
        type=float,
        default=CORRECT_SHARE,
        help=f"share of answers written correctly (default {CORRECT_SHARE}; 1: a clean writer)",
    )
    args = parser.parse_args(argv)
    if not 0.0 <= args.correct_share <= 1.0:
        parser.error(f"--correct-share must be in [0, 1], got {args.correct_share}")
    CORRECT_SHARE = args.correct_share
    return serve(SloppyServer(port=args.port, delay_s=args.delay))


if __name__ == "__main__":
    sys.exit(main())
