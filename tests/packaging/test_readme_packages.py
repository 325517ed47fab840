"""The README's test command passes on a host with the packages the README names: the
README's apt-get line names every package ``.ci/run`` installs for the tests."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def ci_packages() -> set[str]:
    """The Debian packages ``.ci/run`` installs (its ``missing+=(...)`` lines), one per arch
    where the line loops over ``riscv64`` and ``arm64``."""
    text = (ROOT / ".ci" / "run").read_text()
    arches = re.search(r"for arch in ([\w ]+); do", text)
    assert arches, ".ci/run no longer loops over the cross architectures"
    packages = set()
    for group in re.findall(r"missing\+=\(([^)]*)\)", text):
        for word in group.replace('"', "").split():
            if "$arch" in word:
                packages |= {word.replace("$arch", arch) for arch in arches.group(1).split()}
            else:
                packages.add(word)
    return packages


def readme_packages() -> set[str]:
    """The packages of the README's ``apt-get install`` line for the tests (before its shell
    block of the test command)."""
    text = (ROOT / "README.md").read_text()
    before = text[: text.index("pip install -c constraints.txt")]
    line = re.findall(r"`apt-get install ([^`]+)`", before)[-1]
    return set(line.split())


def test_the_readme_names_every_package_ci_installs():
    assert {"libomp-19-dev", "qemu-user", "valgrind"} <= ci_packages()
    assert ci_packages() - readme_packages() == set()
