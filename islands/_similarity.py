"""Program fingerprints: an equivalence key and token shingles, shared by novelty and descriptors.

Two views of a candidate serve two questions:

* **Is it the same program?** :func:`ast_key` hashes the Python syntax tree with docstrings,
  comments, formatting and the names of function-local variables erased (renamed positionally).
  Equal keys mean equivalent programs, so the novelty filter rejects the second one without
  evaluating it. A false "equal" would discard a new program unseen, so the key erases only
  what provably cannot change behaviour: a name is renamed only when every use of it is a
  function-local one (Python's own :mod:`symtable` says so); module-level names (``main``, the
  entry the evaluator calls), class attributes, imported names, builtins, attributes and the
  parameters of module- and class-level functions (callers may pass them by keyword) keep
  their names. Constants are kept exactly (``1``, ``1.0`` and ``True`` differ).
* **How similar is it?** :func:`code_tokens` lexes the evolving code (the EVOLVE-BLOCK text)
  into tokens with comments, layout and docstrings dropped and every identifier but keywords,
  builtins and attribute names replaced by a positional placeholder; :func:`shingles` hashes
  its k-grams, and :func:`jaccard` compares two such sets. A renamed variable leaves the
  tokens unchanged; a one-token edit changes about k of the shingles.

Cost (``bench/novelty_cost.py``): the key is about twice :func:`ast.parse` (the parse, then
one walk and :func:`ast.dump`), ~2.5 ms for a 200-line program on an idle core; tokens and
shingles are a tenth of that. The lexer is one regular expression rather than :mod:`tokenize`,
which alone costs 1.7 ms for a 150-line program on Python 3.11 and raises on code that does
not tokenize; shingles do not need Python's exact token boundaries.
:func:`fingerprint` computes all of it once per source (cached), so the lead may compute it
where the candidate is proposed and hand it over.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import keyword
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from evoforge.problems import BlockError, find_blocks

SHINGLE_K = 5
"""Tokens per shingle: long enough that shared shingles mean shared code, short enough that a
one-token edit changes only a few."""
KEY_CHARS = 16
"""Hex digits of :func:`ast_key` (64 bits: a collision among a run's programs is negligible)."""

_PY_KEPT = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
# Keywords and primitive type names of C, C++, CUDA, Rust, Triton/Metal sources: kept as
# tokens, so `for`/`while` or `int`/`float` differ in the shingles of non-Python code.
_C_KEYWORDS = frozenset(
    """
    auto bool break case char const constexpr continue default do double else enum extern
    float for goto if inline int long register restrict return short signed sizeof static
    struct switch typedef union unsigned void volatile while class namespace template
    typename using public private protected virtual override new delete this true false
    nullptr __global__ __device__ __host__ __shared__ __restrict__ __syncthreads threadIdx
    blockIdx blockDim gridDim kernel device threadgroup fn let mut impl pub mod use crate
    self Self match loop in as ref move unsafe where trait type dyn usize isize u8 u16 u32
    u64 i8 i16 i32 i64 f32 f64 size_t uint8_t int8_t uint16_t int16_t uint32_t int32_t
    uint64_t int64_t half
    """.split()
)

_PY_STRING = (
    r"[rRbBuUfF]{0,2}(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\""
    r"|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\")"
)
_C_STRING = r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
_NUMBER = (
    r"0[xXbBoO][0-9a-fA-F_]+[a-zA-Z0-9]*"
    r"|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?[a-zA-Z0-9]*"
)
_OPERATOR = r"\*\*=?|//=?|>>=?|<<=?|->|::|:=|\.\.\.|&&|\|\||\+\+|--|[-+*/%&|^=<>!@]=|[^\s\w]"
# One pattern without groups, so `findall` returns the token texts at C speed. In Python a
# docstring (a string alone on its line) is matched together with the newline before it and
# a backslash continuation as `\` + newline: like comments, they start with a character that
# no kept token starts with, and are dropped by it.
_PY_LEXER = re.compile(
    rf"\n[ \t]*{_PY_STRING}(?=[ \t]*(?:#[^\n]*)?(?:\n|\Z))|#[^\n]*|\\\n|{_PY_STRING}"
    rf"|{_NUMBER}|[^\W\d]\w*|{_OPERATOR}",
    re.DOTALL,
)
_PY_DROPPED = frozenset("#\n\\")
_C_LEXER = re.compile(
    rf"//[^\n]*|/\*.*?\*/|\\\n|{_C_STRING}|{_NUMBER}|[^\W\d]\w*|{_OPERATOR}", re.DOTALL
)
_C_DROPPED = frozenset({"//", "/*", "\\\n"})
_ATTRIBUTE_OPERATORS = frozenset({".", "->", "::"})


def evolving_code(source: str) -> str:
    """The text of the EVOLVE-BLOCK regions of ``source``, joined by newlines.

    The frozen parts are the same in every program of a run, so only this text says how
    programs differ. A source without regions, or with broken markers, counts whole.
    """
    try:
        blocks = find_blocks(source)
    except BlockError:
        return source
    return "\n".join(source[b.start : b.end] for b in blocks)


def _lex(code: str, language: str) -> list[str]:
    """Token texts of ``code``; comments and layout (and Python docstrings) dropped."""
    if language == "python":
        return [t for t in _PY_LEXER.findall("\n" + code) if t[0] not in _PY_DROPPED]
    return [t for t in _C_LEXER.findall(code) if t[:2] not in _C_DROPPED]


def code_tokens(code: str, language: str = "python") -> list[str]:
    """The tokens of ``code`` that say what it does, for similarity.

    Comments, whitespace, line breaks and, in Python, docstrings (a string alone on its
    line) are dropped. Identifiers become positional placeholders (the first distinct name
    ``v0``, the next ``v1``, ...), so renaming a variable changes nothing. Keywords, Python's
    builtins, and names right after ``.``, ``->`` or ``::`` (attributes and paths: in
    ``np.sqrt``, ``sqrt`` stays) keep their text: changing them changes what the code does.
    Numbers, strings and operators stay as written.

    Any text is accepted: code that does not parse, and other languages (C, C++, CUDA, Rust,
    with ``//`` and ``/* */`` comments), are lexed the same linear way.
    """
    tokens = _lex(code, language)
    kept = _PY_KEPT if language == "python" else _C_KEYWORDS
    names: dict[str, str] = {}
    previous = ["", *tokens]
    return [
        names.setdefault(t, f"v{len(names)}")
        if t.isidentifier() and t not in kept and p not in _ATTRIBUTE_OPERATORS
        else t
        for p, t in zip(previous, tokens, strict=False)
    ]


# -- the equivalence key --------------------------------------------------------------------


def _renamable(source: str) -> frozenset[str]:
    """Names that are function-local wherever they occur (see the module docstring).

    Reads the flags of CPython's symbol table directly (``_symtable``, what :mod:`symtable`
    wraps): the public wrapper builds an object per symbol, which costs as much again as
    the table itself.
    """
    if _symtable is None:
        return frozenset()  # keep every name: a key that can only miss equivalences
    local: set[str] = set()
    kept: set[str] = set()
    stack = [(_symtable.symtable(source, "<candidate>", "exec"), -1)]
    while stack:
        table, parent_type = stack.pop()
        function = table.type == _FUNCTION
        interface = parent_type in (_MODULE, _CLASS)  # callers may pass its parameters by name
        for name, flags in table.symbols.items():
            scope = (flags >> _SCOPE_OFF) & _SCOPE_MASK
            if not function or scope in _GLOBAL_SCOPES or flags & _DEF_IMPORT:
                kept.add(name)
            elif flags & _DEF_PARAM and interface:
                kept.add(name)
            elif scope in _LOCAL_SCOPES:
                local.add(name)
        stack.extend((child, table.type) for child in table.children)
    return frozenset(local - kept)


try:  # CPython's symbol table (what the public `symtable` module wraps)
    import _symtable

    _FUNCTION, _MODULE, _CLASS = (
        _symtable.TYPE_FUNCTION, _symtable.TYPE_MODULE, _symtable.TYPE_CLASS,
    )  # fmt: skip
    _SCOPE_OFF, _SCOPE_MASK = _symtable.SCOPE_OFF, _symtable.SCOPE_MASK
    _GLOBAL_SCOPES = (_symtable.GLOBAL_IMPLICIT, _symtable.GLOBAL_EXPLICIT)
    _LOCAL_SCOPES = (_symtable.LOCAL, _symtable.CELL)
    _DEF_IMPORT, _DEF_PARAM = _symtable.DEF_IMPORT, _symtable.DEF_PARAM
except (ImportError, AttributeError):  # another interpreter: names are kept, never guessed
    _symtable = None
_NAME_FIELDS: dict[type, str] = {
    ast.Name: "id",
    ast.arg: "arg",
    ast.FunctionDef: "name",
    ast.AsyncFunctionDef: "name",
    ast.ClassDef: "name",
    ast.ExceptHandler: "name",
    ast.MatchAs: "name",
    ast.MatchStar: "name",
    ast.MatchMapping: "rest",
}
_DOC_OWNERS = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _normalise(tree: ast.Module, renamable: frozenset[str]) -> str:
    """``tree``, with docstrings dropped and renamable names replaced by positional
    placeholders in place, as :func:`ast.dump` text (no positions; constants as ``repr``,
    so ``1``, ``1.0`` and ``True`` differ).

    Placeholders are numbered in :func:`ast.walk` order, which depends only on the tree's
    shape, so two programs that differ by a renaming get the same numbers.
    """
    names: dict[str, str] = {}

    def rename(text: str) -> str:
        if text not in renamable:
            return text
        token = names.get(text)
        if token is None:
            token = names[text] = f"${len(names)}"  # `$` cannot clash with a kept name
        return token

    for node in ast.walk(tree):
        cls = type(node)
        field = _NAME_FIELDS.get(cls)
        if field is not None:
            value = getattr(node, field)
            if value is not None:
                setattr(node, field, rename(value))
        elif cls is ast.Global or cls is ast.Nonlocal:
            node.names = [rename(n) for n in node.names]  # type: ignore[attr-defined]
        if isinstance(node, _DOC_OWNERS) and _has_docstring(node.body):
            node.body = node.body[1:]
    return ast.dump(tree, annotate_fields=False)


def _has_docstring(body: Sequence[ast.stmt]) -> bool:
    if not body or not isinstance(body[0], ast.Expr):
        return False
    value = body[0].value
    return isinstance(value, ast.Constant) and isinstance(value.value, str)


def _digest(parts: Iterable[str]) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=KEY_CHARS // 2).hexdigest()


@lru_cache(maxsize=512)
def ast_key(source: str, language: str = "python") -> str:
    """A 16-hex-digit key equal for programs that differ only in what cannot matter.

    Python that parses: the syntax tree with docstrings dropped, function-local names
    renamed positionally, constants kept exactly (see the module docstring for which names
    count as local). Names, comments, blank lines and formatting (line breaks, spacing,
    parentheses, quote style) do not change the key; any constant, operator, call or
    attribute does.

    Other languages, and Python that does not parse: the digest of the token stream with
    comments and layout dropped but every name kept, because without scopes a renamed
    identifier cannot be told from a call of another function (``sqrt`` vs ``exp``).

    The key is a function of the source and the Python version's grammar; cached (512
    sources), so calling it again for the same text is free.
    """
    if language == "python":
        try:
            tree = ast.parse(source)
            renamable = _renamable(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        else:
            return _digest([_normalise(tree, renamable)])
    return _digest(["tokens", *_lex(source, language)])


# -- shingles ---------------------------------------------------------------------------------

_BASE = np.uint64(0x100000001B3)  # FNV prime: odd, so the polynomial hash mixes every token
_token_ids: dict[str, int] = {}
_TOKEN_IDS_MAX = 200_000


def _token_id(token: str) -> int:
    """A stable 64-bit hash of a token (blake2b), memoised: a run's vocabulary is small."""
    value = _token_ids.get(token)
    if value is None:
        if len(_token_ids) >= _TOKEN_IDS_MAX:
            _token_ids.clear()
        digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
        value = _token_ids[token] = int.from_bytes(digest, "little")
    return value


def shingles(tokens: Sequence[str], k: int = SHINGLE_K) -> frozenset[int]:
    """The hashed k-grams of ``tokens``: a set to compare with :func:`jaccard`.

    Each k-gram hashes to a 64-bit int by a polynomial over stable per-token hashes
    (blake2b, not Python's ``hash()``, which changes between processes), so the same
    tokens give the same set in every process and on every resume. Fewer than ``k``
    tokens make one shingle of them all (empty tokens: the empty set).
    """
    if k < 1:
        raise ValueError(f"shingle length k must be >= 1, got {k}")
    if not tokens:
        return frozenset()
    ids = np.fromiter((_token_id(t) for t in tokens), dtype=np.uint64, count=len(tokens))
    k = min(k, len(ids))
    count = len(ids) - k + 1
    hashes = ids[:count].copy()
    with np.errstate(over="ignore"):
        for j in range(1, k):
            hashes *= _BASE
            hashes ^= ids[j : j + count]
    return frozenset(hashes.tolist())


def jaccard(a: frozenset[int] | set[int], b: frozenset[int] | set[int]) -> float:
    """|a ∩ b| / |a ∪ b|: 1.0 for equal sets (two empty sets included), 0.0 for disjoint."""
    if not a and not b:
        return 1.0
    if len(a) > len(b):
        a, b = b, a
    common = len(a & b)
    return common / (len(a) + len(b) - common)


# -- fingerprints -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Fingerprint:
    """What the novelty filter and the built-in descriptors need to know about a program.

    Plain values, so it can be computed where the candidate is proposed (a worker process)
    and sent along.

    Attributes:
        key: :func:`ast_key` of the whole source.
        size: tokens in its evolving code (:func:`code_tokens`).
        shingles: :func:`shingles` of those tokens.
    """

    key: str
    size: int
    shingles: frozenset[int]


def fingerprint(source: str, language: str = "python") -> Fingerprint:
    """The :class:`Fingerprint` of ``source`` (its parts are cached: 256 sources or more)."""
    return Fingerprint(ast_key(source, language), *_token_view(source, language))


@lru_cache(maxsize=256)
def _token_view(source: str, language: str) -> tuple[int, frozenset[int]]:
    tokens = code_tokens(evolving_code(source), language)
    return len(tokens), shingles(tokens)


class ShingleCache:
    """Shingles of stored programs' evolving code by program id; the least recently used are
    dropped beyond ``size``.

    An island's elites change one cell at a time, so re-reading them for every candidate
    costs only the new ones. Programs are immutable once stored: entries never go stale.
    """

    def __init__(self, language: str = "python", size: int = 4096) -> None:
        if size < 1:
            raise ValueError(f"cache size must be >= 1, got {size}")
        self.language, self.size = language, size
        self._entries: OrderedDict[str, frozenset[int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, program_id: str, load: Callable[[], str | None]) -> frozenset[int]:
        """The shingles of program ``program_id``; ``load()`` returns its source when it is
        not cached (None, an attempt without source: no shingles)."""
        entry = self._entries.get(program_id)
        if entry is not None:
            self._entries.move_to_end(program_id)
            return entry
        source = load()
        entry = frozenset() if source is None else _token_view(source, self.language)[1]
        self._entries[program_id] = entry
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return entry
