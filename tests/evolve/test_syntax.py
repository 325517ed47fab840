"""The syntax gate: CPython's compile() decides, and its place and message are reported."""

from __future__ import annotations

import time

import pytest

from evoforge.evolve.checks._syntax import check_syntax

FUNCTION = """\
def f{i}(x, y):
    z = x * {i}.5 + y
    if z > 3:
        return min(z, y)
    return z
"""
PROGRAM = "".join(FUNCTION.format(i=i) for i in range(20))


def test_valid_program() -> None:
    assert check_syntax(PROGRAM) is None
    assert check_syntax("") is None


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param(
            "def f(x):\n    return x +\n",
            "line 2, column 15: invalid syntax at 'return x +'",
            id="dangling-operator",
        ),
        pytest.param("def f(:\n    pass\n", "line 1, column 7: invalid syntax", id="missing-token"),
        pytest.param(
            "x = 1\ns = 'é' + (\n",
            "line 2, column 11: '(' was never closed at \"s = 'é' + (\"",
            id="unclosed-paren",
        ),
        pytest.param(
            "x = 1\n\ny = 'é';  a b\n",
            "line 3, column 13: invalid syntax at \"y = 'é';  a b\"",
            id="column-counts-characters",
        ),
        pytest.param(
            "x = 1\ny = 2\0\n",
            "line 2, column 6: source code string cannot contain null bytes",
            id="null-byte",
        ),
    ],
)
def test_the_place_and_message_are_cpythons(source: str, expected: str) -> None:
    message = check_syntax(source)
    assert message is not None and message.startswith(expected)


# A small model's answer (issue 35): an `else:` dedented away from its `if`, near the end of a
# program that opens with a docstring. tree-sitter's first ERROR node is the whole module from
# line 1, column 1 (the docstring); CPython, and the traceback the model would see, say line 37.
DOCSTRING_PROGRAM = (
    '"""Pack circles.\n\nA docstring of a few lines.\n"""\n\nimport numpy as np\n\n'
    + "".join(f"X{i} = {i}\n" for i in range(8, 34))
    + "def f(x):\n    if x > 0:\n        return 1\nelse:\n    return 0\n"
)


def test_the_docstring_is_not_blamed_for_a_later_error() -> None:
    with pytest.raises(SyntaxError) as cpython:
        compile(DOCSTRING_PROGRAM, "<candidate>", "exec")
    assert (cpython.value.lineno, DOCSTRING_PROGRAM.split("\n")[36]) == (37, "else:")
    assert check_syntax(DOCSTRING_PROGRAM) == (
        f"line 37, column {cpython.value.offset}: {cpython.value.msg} at 'else:'"
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("return 5\n", "line 1, column 1: 'return' outside function", id="return"),
        pytest.param("x = 1\nbreak\n", "line 2, column 1: 'break' outside loop", id="break"),
        pytest.param("del f()\n", "line 1, column 5: cannot delete function call", id="del-call"),
    ],
)
def test_what_only_compile_rejects(source: str, expected: str) -> None:
    message = check_syntax(source)
    assert message is not None and expected in message


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("x = 1\0\n", id="null-byte"),
        pytest.param("(" * 300 + ")" * 300 + "\n", id="too-deep"),
        pytest.param("if x:\npass\n", id="indentation"),
    ],
)
def test_hostile_sources_give_a_message_not_an_exception(source: str) -> None:
    message = check_syntax(source)
    assert message is not None and message.startswith("line ")


def test_fast_for_a_hundred_lines() -> None:
    assert PROGRAM.count("\n") == 100
    check_syntax(PROGRAM)
    started = time.perf_counter()
    for _ in range(50):
        check_syntax(PROGRAM)
    assert (time.perf_counter() - started) / 50 < 0.01  # measured ~0.6 ms
