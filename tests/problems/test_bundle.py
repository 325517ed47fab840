"""Repository bundles: several files as one program text, split back byte for byte."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from evoforge.problems import BundleError, find_blocks, make_bundle, split_bundle

_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=80)
_path = st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6}){0,2}\.(py|c|txt)", fullmatch=True)


@given(st.dictionaries(_path, _text, min_size=1, max_size=4))
def test_a_bundle_splits_back_into_its_files(files):
    try:
        source = make_bundle(files)
    except BundleError:
        return  # a file with a line that reads as a bundle line is refused, not mangled
    assert split_bundle(source) == files
    assert list(split_bundle(source)) == list(files)
    assert len(find_blocks(source)) >= len(files)  # every file has something to evolve


def test_files_with_their_own_blocks_keep_them_and_others_evolve_whole():
    marked = "a = 1\n# EVOLVE-BLOCK-START\nb = 2\n# EVOLVE-BLOCK-END\n"
    source = make_bundle({"m.py": marked, "w.py": "c = 3"})
    blocks = find_blocks(source)
    assert [source[b.start : b.end] for b in blocks] == ["b = 2\n", "c = 3\n"]
    assert split_bundle(source) == {"m.py": marked, "w.py": "c = 3"}


def test_a_file_holding_a_bundle_line_is_refused():
    with pytest.raises(BundleError, match="line 2"):
        make_bundle({"a.py": "x = 1\n# === FILE: b.py ===\n"})


def test_text_that_is_not_a_bundle_is_refused():
    with pytest.raises(BundleError, match="not a repository bundle"):
        split_bundle("x = 1\n")
