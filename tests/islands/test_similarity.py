"""Program fingerprints: the equivalence key, tokens, shingles and their similarity."""

from __future__ import annotations

import builtins
import keyword
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings, strategies as st

from evoforge.islands import (
    ShingleCache,
    ast_key,
    code_tokens,
    evolving_code,
    fingerprint,
    jaccard,
    shingles,
)

BASE = textwrap.dedent(
    '''
    import numpy as np

    def helper(values):
        """Sum of squares."""
        total = 0.0
        for item in values:
            total += item * item
        return np.sqrt(total)

    def main():
        points = [1.0, 2.5, 3.0]
        return helper(points)
    '''
)

EQUIVALENT = {
    "renamed locals": BASE.replace("total", "acc").replace("item", "x").replace("points", "pts"),
    "comments and blank lines": BASE.replace("total = 0.0", "total = 0.0  # start\n\n"),
    "docstring changed": BASE.replace("Sum of squares.", "Root of the sum of squares."),
    "docstring removed": BASE.replace('    """Sum of squares."""\n', ""),
    "reformatted": BASE.replace(
        "points = [1.0, 2.5, 3.0]", "points = [\n        1.0,\n        2.5,\n        3.0\n    ]"
    ).replace("total += item * item", "total += (item * item)"),
    "quote style and spacing": BASE.replace("total = 0.0", "total=0.0"),
}
DIFFERENT = {
    "constant": BASE.replace("2.5", "2.6"),
    "int for float": BASE.replace("total = 0.0", "total = 0"),
    "operator": BASE.replace("item * item", "item + item"),
    "augmented operator": BASE.replace("+=", "-="),
    "attribute": BASE.replace("np.sqrt", "np.exp"),
    "module-level function name": BASE.replace("main", "run"),
    "parameter of a module-level function": BASE.replace("values", "vals"),
    "statement order": BASE.replace("    total = 0.0\n    for", "    for").replace(
        "    return np.sqrt(total)", "    total = 0.0\n    return np.sqrt(total)"
    ),
}


@pytest.mark.parametrize("variant", EQUIVALENT, ids=list(EQUIVALENT))
def test_equivalent_programs_share_a_key(variant):
    assert EQUIVALENT[variant] != BASE
    assert ast_key(EQUIVALENT[variant]) == ast_key(BASE)


@pytest.mark.parametrize("variant", DIFFERENT, ids=list(DIFFERENT))
def test_a_changed_meaning_changes_the_key(variant):
    assert DIFFERENT[variant] != BASE
    assert ast_key(DIFFERENT[variant]) != ast_key(BASE)


def test_key_is_sixteen_hex_digits():
    key = ast_key(BASE)
    assert len(key) == 16 and int(key, 16) >= 0


def test_a_local_that_shadows_a_builtin_used_elsewhere_keeps_its_name():
    # Renaming `max` in f would make both programs' g call the same placeholder.
    one = "def f():\n    max = 3\n    return max\n\ndef g(a):\n    return max(a)\n"
    two = one.replace("max", "min")
    assert ast_key(one) != ast_key(two)


def test_nested_functions_and_closures_are_renamed_consistently():
    one = "def main():\n    k = 2\n    def inner(z):\n        return z * k\n    return inner(3)\n"
    two = one.replace("inner", "mul").replace("z", "w").replace("k", "factor")
    assert ast_key(one) == ast_key(two)


def test_code_that_does_not_parse_gets_a_token_key():
    broken = "def main(:\n    return 1  # oops\n"
    assert ast_key(broken) == ast_key("def main(:\n        return 1\n")
    assert ast_key(broken) != ast_key(broken.replace("1", "2"))


def test_other_languages_erase_comments_and_layout_but_keep_names():
    c = "float f(float x) {\n  // square\n  return x * x; /* done */\n}\n"
    assert ast_key(c, "c") == ast_key("float f(float x) { return x*x; }", "c")
    assert ast_key(c, "c") != ast_key(c.replace("x", "y"), "c")  # could be sqrt vs exp


# -- tokens ---------------------------------------------------------------------------------


def test_tokens_rename_identifiers_and_keep_keywords_builtins_attributes():
    tokens = code_tokens("total = np.sqrt(len(xs)) if xs else 0  # note\n")
    assert tokens == ["v0", "=", "v1", ".", "sqrt", "(", "len", "(", "v2", ")", ")", "if",
                      "v2", "else", "0"]  # fmt: skip


def test_tokens_drop_docstrings_comments_and_layout():
    code = 'def f(a):\n    """Doc."""\n    # comment\n    return (\n        a\n    )\n'
    assert code_tokens(code) == ["def", "v0", "(", "v1", ")", ":", "return", "(", "v1", ")"]


def test_tokens_keep_strings_that_are_values():
    assert code_tokens('name = "abc"\n') == ["v0", "=", '"abc"']


def test_tokens_of_c_like_code():
    code = "#include <math.h>\n__global__ void k(float* out) { /* c */ out[0] = a->b; } // x\n"
    tokens = code_tokens(code, "cuda")
    assert tokens[:3] == ["#", "v0", "<"]
    assert "__global__" in tokens and "void" in tokens and "b" in tokens and "/*" not in tokens
    assert "//" not in " ".join(tokens)


@given(st.text(max_size=200))
def test_any_text_lexes(text):
    assert isinstance(code_tokens(text), list)
    assert isinstance(code_tokens(text, "rust"), list)
    assert len(ast_key(text)) == 16


def test_evolving_code_is_the_blocks_text():
    source = "x = 1\n# EVOLVE-BLOCK-START\ny = 2\n# EVOLVE-BLOCK-END\nz = 3\n"
    assert evolving_code(source) == "y = 2\n"
    assert evolving_code("no markers\n") == "no markers\n"
    broken = "# EVOLVE-BLOCK-START\ny = 2\n"
    assert evolving_code(broken) == broken


# -- shingles -------------------------------------------------------------------------------


def test_shingles_are_k_grams():
    tokens = list("abcdefg")
    assert len(shingles(tokens, k=5)) == 3
    assert len(shingles(tokens[:3], k=5)) == 1  # fewer than k: one shingle of all
    assert shingles([]) == frozenset()
    assert shingles(tokens, k=2) != shingles(list("abcdefh"), k=2)
    with pytest.raises(ValueError, match="k must be >= 1"):
        shingles(tokens, k=0)


def test_shingles_are_the_same_in_another_process():
    code = (
        "from evoforge.islands import shingles;"
        "print(sorted(shingles(['def', 'v0', '(', ')', ':', 'return', '1'])))"
    )
    here = sorted(shingles(["def", "v0", "(", ")", ":", "return", "1"]))
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        assert out.strip() == str(here)


def test_jaccard():
    a, b = frozenset({1, 2, 3, 4}), frozenset({3, 4, 5})
    assert jaccard(a, b) == pytest.approx(2 / 5)
    assert jaccard(a, a) == 1.0
    assert jaccard(a, frozenset()) == 0.0
    assert jaccard(frozenset(), frozenset()) == 1.0


def test_a_renamed_variable_is_identical_and_one_edit_is_near():
    assert fingerprint(BASE).shingles == fingerprint(EQUIVALENT["renamed locals"]).shingles
    near = jaccard(fingerprint(BASE).shingles, fingerprint(DIFFERENT["constant"]).shingles)
    assert 0.6 < near < 1.0


def test_shingle_cache_loads_once_and_is_bounded():
    cache = ShingleCache(size=2)
    loads = []

    def load(source):
        return lambda: loads.append(source) or source

    first = cache.get("a", load("x = 1\n"))
    assert cache.get("a", load("ignored")) == first and loads == ["x = 1\n"]
    cache.get("b", load("y = 2\n"))
    cache.get("c", load("z = 3\n"))
    assert len(cache) == 2
    cache.get("a", load("x = 1\n"))  # evicted (least recently used): loaded again
    assert loads.count("x = 1\n") == 2
    assert cache.get("none", lambda: None) == frozenset()


# -- invariance under consistent renaming -------------------------------------------------

_RESERVED = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins)) | {"main"}
names = st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True).filter(lambda n: n not in _RESERVED)
operators = st.sampled_from(["+", "-", "*", "/", "%", "<", "=="])
constants = st.one_of(st.integers(-5, 9), st.sampled_from([0.5, 1.25, 2.0]))


@st.composite
def programs(draw):
    """A small function of locals plus the names it uses: (template, local names)."""
    local = draw(st.lists(names, min_size=2, max_size=5, unique=True))
    lines = [f"{{{0}}} = {draw(constants)!r}"]
    for _ in range(draw(st.integers(1, 6))):
        target, left, right = (draw(st.integers(0, len(local) - 1)) for _ in range(3))
        kind = draw(st.integers(0, 2))
        if kind == 0:
            lines.append(f"{{{target}}} = {{{left}}} {draw(operators)} {draw(constants)!r}")
        elif kind == 1:
            lines.append(f"for {{{target}}} in range({{{left}}}): {{{right}}} = {{{target}}}")
        else:
            lines.append(f"{{{target}}} = [{{{left}}} for {{{left}}} in range(3)]")
    # every name is assigned before the loop bodies read it
    prelude = [f"{{{i}}} = {i}" for i in range(len(local))]
    body = "\n".join(f"    {line}" for line in prelude + lines)
    return f"def main():\n{body}\n    return {{0}}\n", local


@settings(max_examples=60, deadline=None)
@given(programs(), st.data())
def test_key_is_invariant_under_consistent_renaming_of_locals(program, data):
    template, local = program
    fresh = data.draw(
        st.lists(names, min_size=len(local), max_size=len(local), unique=True).filter(
            lambda new: not set(new) & set(local) or new == local
        )
    )
    original = template.format(*local)
    renamed = template.format(*fresh)
    assert ast_key(original) == ast_key(renamed)
    assert code_tokens(original) == code_tokens(renamed)
