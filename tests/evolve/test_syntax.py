"""The syntax gate: tree-sitter locates problems, compile() decides."""

from __future__ import annotations

import time

import pytest

from evoforge.evolve._syntax import check_syntax

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
            "line 2, column 5: invalid syntax at 'return x +'",
            id="dangling-operator",
        ),
        pytest.param("def f(:\n    pass\n", "line 1, column 7: missing ')'", id="missing-token"),
        pytest.param(
            "x = 1\ns = 'é' + (\n",
            "line 2, column 1: invalid syntax at \"s = 'é' + (\"",
            id="unclosed-paren",
        ),
        pytest.param(
            "x = 1\n\ny = 'é';  a b\n",
            "line 3, column 11: invalid syntax at 'a'",
            id="column-counts-characters",
        ),
    ],
)
def test_tree_sitter_locates_the_problem(source: str, expected: str) -> None:
    message = check_syntax(source)
    assert message is not None and message.startswith(expected)


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
