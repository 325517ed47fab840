"""SEARCH/REPLACE blocks headed by a file path, applied to a repository bundle."""

from __future__ import annotations

import pytest

from evoforge.evolve.edits import EditError, apply_edit
from evoforge.evolve.edits._files import heading_path
from evoforge.problems import make_bundle, split_bundle

FILES = {
    "pkg/a.py": "def f():\n    return 1\n",  # no markers: evolves whole
    "pkg/b.py": "X = 0\n# EVOLVE-BLOCK-START\ndef g():\n    return 1\n# EVOLVE-BLOCK-END\n",
}
BUNDLE = make_bundle(FILES)


def block(search: str, replace: str, heading: str = "") -> str:
    head = f"{heading}\n" if heading else ""
    return f"{head}<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def test_a_block_headed_by_a_file_applies_only_in_that_file():
    # "    return 1" is in both files: unheaded, it is ambiguous; headed, it is not
    with pytest.raises(EditError):
        apply_edit(BUNDLE, block("    return 1\n", "    return 2\n"))
    child = apply_edit(BUNDLE, block("    return 1\n", "    return 2\n", "pkg/b.py"))
    files = split_bundle(child.source)
    assert files["pkg/a.py"] == FILES["pkg/a.py"]
    assert files["pkg/b.py"] == FILES["pkg/b.py"].replace("return 1", "return 2")


def test_blocks_for_two_files_and_a_following_block_keeps_the_file():
    answer = (
        "I change both files.\n"
        + block("def f():\n", "def f():  # faster\n", "`pkg/a.py`")
        + block("    return 1\n", "    return 3\n")  # no line between: still pkg/a.py
        + "\n**File: pkg/b.py**\n```python\n"
        + block("    return 1\n", "    return 4\n")
        + "```\n"
    )
    files = split_bundle(apply_edit(BUNDLE, answer).source)
    assert files["pkg/a.py"] == "def f():  # faster\n    return 3\n"
    assert "return 4" in files["pkg/b.py"]


def test_a_block_naming_a_file_outside_the_problem_is_refused():
    with pytest.raises(EditError, match=r"'pkg/c\.py', which is not one of the files .*pkg/a\.py"):
        apply_edit(BUNDLE, block("X = 0\n", "X = 1\n", "pkg/c.py"))


def test_a_search_text_in_another_file_names_the_heading_file():
    with pytest.raises(EditError, match="headed by the file pkg/a.py"):
        apply_edit(BUNDLE, block("def g():\n", "def h():\n", "pkg/a.py"))


def test_frozen_headers_cannot_be_edited():
    with pytest.raises(EditError):
        apply_edit(BUNDLE, block("# === FILE: pkg/b.py ===\n", "# === FILE: pkg/z.py ===\n"))


def test_headings_are_ignored_for_a_single_program():
    program = "# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n"
    child = apply_edit(program, block("x = 1\n", "x = 2\n", "other/file.py"))
    assert child.source == program.replace("x = 1", "x = 2")


@pytest.mark.parametrize(
    ("line", "path"),
    [
        ("pkg/a.py", "pkg/a.py"),
        ("`pkg/a.py`", "pkg/a.py"),
        ("**pkg/a.py**", "pkg/a.py"),
        ("File: pkg/a.py", "pkg/a.py"),
        ("### ./pkg/a.py:", "pkg/a.py"),
        ("# === FILE: pkg/a.py ===", "pkg/a.py"),
        ("Makefile.am", "Makefile.am"),
        ("Here is my change:", None),
        ("Next, the loop.", None),
    ],
)
def test_heading_paths(line, path):
    assert heading_path(line) == path
