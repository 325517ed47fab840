"""Whole-file rewrites of a repository bundle: fenced blocks headed by the file's path, in the
ways real models write them."""

from __future__ import annotations

import pytest

from evoforge.evolve.edits import EditError, apply_edit
from evoforge.problems import make_bundle, split_bundle

FILES = {
    "pkg/core.py": "def mean(xs):\n    return sum(xs) / len(xs)\n",  # evolves whole
    "pkg/window.py": "N = 1\n# EVOLVE-BLOCK-START\ndef width():\n    return 3\n"
    "# EVOLVE-BLOCK-END\n",
}
BUNDLE = make_bundle(FILES)
NEW_CORE = "def mean(xs):\n    n = len(xs)\n    return sum(xs) / n\n"

ANSWERS = {
    "info_string": f"Here you go.\n\n```python pkg/core.py\n{NEW_CORE}```\n",
    "info_string_alone": f"```pkg/core.py\n{NEW_CORE}```\n",
    "info_colon": f"```python:pkg/core.py\n{NEW_CORE}```\n",
    "markdown_heading": f"I made `mean` cheaper.\n\n### pkg/core.py\n```python\n{NEW_CORE}```\n",
    "backticks_colon": f"`pkg/core.py`:\n```python\n{NEW_CORE}```\nDone.\n",
    "bold_file": f"**File: pkg/core.py**\n\n```\n{NEW_CORE}```\n",
    "prose_naming_it": f"Here is the updated `pkg/core.py`:\n```py\n{NEW_CORE}```\n",
    "first_line_comment": f"```python\n# pkg/core.py\n{NEW_CORE}```\n",
    "bundle_header_line": f"```python\n# === FILE: pkg/core.py ===\n{NEW_CORE}```\n",
    "trailing_spaces_and_tabs": f"### pkg/core.py  \t\n```python   \n{NEW_CORE}```  \n",
    "crlf": f"### pkg/core.py\n```python\n{NEW_CORE}```\n".replace("\n", "\r\n"),
}


@pytest.mark.parametrize("answer", list(ANSWERS.values()), ids=list(ANSWERS))
def test_a_fence_headed_by_a_path_replaces_that_file(answer):
    child = apply_edit(BUNDLE, answer)
    assert child.kind == "rewrite"
    assert split_bundle(child.source) == {**FILES, "pkg/core.py": NEW_CORE}


def test_several_fences_replace_several_files_and_keep_frozen_code():
    window = "def width():\n    return 5\n"
    answer = (
        "Two changes.\n\n### pkg/window.py\n```python\n" + window + "```\n\n"
        "### pkg/core.py\n```python\n" + NEW_CORE + "```\n"
    )
    files = split_bundle(apply_edit(BUNDLE, answer).source)
    assert files["pkg/core.py"] == NEW_CORE
    assert files["pkg/window.py"] == FILES["pkg/window.py"].replace("return 3", "return 5")


def test_a_file_outside_the_problem_is_refused():
    with pytest.raises(EditError, match=r"'pkg/other.py'.*pkg/core.py, pkg/window.py"):
        apply_edit(BUNDLE, f"### pkg/other.py\n```python\n{NEW_CORE}```\n")


def test_a_rewrite_of_a_file_cannot_change_its_frozen_code():
    answer = "### pkg/window.py\n```python\nN = 2\n# EVOLVE-BLOCK-START\ndef width():\n"
    answer += "    return 5\n# EVOLVE-BLOCK-END\n```\n"
    with pytest.raises(EditError, match="frozen"):
        apply_edit(BUNDLE, answer)


def test_a_fence_naming_no_file_is_a_rewrite_of_the_whole_program_as_before():
    with pytest.raises(EditError, match="regions"):  # the bundle has two regions
        apply_edit(BUNDLE, f"Here is the code:\n```python\n{NEW_CORE}```\n")


def test_a_first_comment_that_is_not_an_evolving_file_stays_in_the_file():
    code = "# utils.py helpers\n" + NEW_CORE
    child = apply_edit(BUNDLE, f"### pkg/core.py\n```python\n{code}```\n")
    assert split_bundle(child.source)["pkg/core.py"] == code
