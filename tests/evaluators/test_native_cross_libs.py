"""``qemu:<arch>`` on a host with some of the cross libraries but not all: the missing
package is named with its apt-get line (as for every other measure's tools), and the
candidates are built for this host and tested here instead of failing to compile."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evoforge.evaluators.native import measure_unavailable, qemu_unavailable
from evoforge.evaluators.native._runner import cross_arch

TRIPLE = "riscv64-linux-gnu"
LIBC = (f"usr/{TRIPLE}/include/stdio.h", f"usr/{TRIPLE}/lib/libc.a")
LIBGCC = (f"usr/lib/gcc-cross/{TRIPLE}/12/libgcc.a",)
LIBSTDCXX = (f"usr/lib/gcc-cross/{TRIPLE}/12/libstdc++.a", f"usr/{TRIPLE}/include/c++/12/iostream")


@pytest.fixture(autouse=True)
def tools_installed(monkeypatch):
    """qemu-riscv64, ld.lld-19 and the compilers on PATH, whatever this host has."""
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: f"/usr/bin/{name}")


def sysroot(tmp_path: Path, *files: str) -> str:
    """A made-up root holding ``files`` (empty) under its ``usr``."""
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"")
    return str(tmp_path)


def test_everything_installed_is_measurable(tmp_path):
    root = sysroot(tmp_path, *LIBC, *LIBGCC, *LIBSTDCXX)
    assert qemu_unavailable("riscv64", "cpp", root=root) == ""


def test_missing_libstdcxx_names_its_package_for_cpp_only(tmp_path):
    """Debian's libgcc package makes the gcc-cross folder: its presence proves nothing."""
    root = sysroot(tmp_path, *LIBC, *LIBGCC)
    why = qemu_unavailable("riscv64", "cpp", root=root)
    assert why.startswith("device unavailable: no riscv64-linux-gnu libstdc++"), why
    assert why.endswith("(apt-get install -y libstdc++-12-dev-riscv64-cross)")
    assert qemu_unavailable("riscv64", "c", root=root) == ""


def test_runtime_libc_without_headers_is_not_enough(tmp_path):
    """libc6-riscv64-cross (no -dev) makes /usr/riscv64-linux-gnu/lib, not stdio.h."""
    (tmp_path / f"usr/{TRIPLE}/lib").mkdir(parents=True)
    root = sysroot(tmp_path, *LIBGCC)
    why = qemu_unavailable("riscv64", "c", root=root)
    assert "the C library" in why and "apt-get install -y libc6-dev-riscv64-cross" in why


def test_every_missing_package_is_in_one_line(tmp_path):
    why = qemu_unavailable("aarch64", "cpp", root=sysroot(tmp_path))
    assert why.endswith(
        "(apt-get install -y libc6-dev-arm64-cross libgcc-12-dev-arm64-cross "
        "libstdc++-12-dev-arm64-cross)"
    ), why


def test_the_measure_checks_the_problems_language(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(
        "evoforge.evaluators.native._tools.qemu_unavailable",
        lambda arch, language="c", **_: calls.append((arch, language)) or "",
    )
    measure_unavailable("cpp", "qemu:riscv64")
    assert calls == [("riscv64", "cpp")]


@pytest.mark.parametrize(
    ("measure", "enabled", "arch"),
    [
        ("qemu:riscv64", True, "riscv64"),
        ("qemu:riscv64", False, ""),  # unmeasurable here: a native build, tested here
        ("callgrind", True, ""),
    ],
    ids=["measured", "correctness-only", "not-qemu"],
)
def test_a_cross_build_only_where_it_is_measured(measure, enabled, arch):
    assert cross_arch({"measure": measure, "measure_enabled": enabled}) == arch


# --- a run on a host without the cross libraries -------------------------------------------

REAL_WHICH = shutil.which

RISCV_PROBLEM = """\
name = "riscv_median"
evaluator = "native"
language = "cpp"
seed_file = "seed.cpp"
measure = "qemu:riscv64"
objectives = {"instructions": "minimize"}
tests = [("3\\n2 9 4\\n", "4\\n")]
"""

RISCV_SEED = """\
#include <algorithm>
#include <iostream>
#include <vector>
// EVOLVE-BLOCK-START
int median(std::vector<int> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
// EVOLVE-BLOCK-END
int main() {
    int n;
    std::cin >> n;
    std::vector<int> v(n);
    for (auto& x : v) std::cin >> x;
    std::cout << median(v) << "\\n";
}
"""


@pytest.mark.skipif(
    any(REAL_WHICH(t) is None for t in ("clang++-19", "qemu-riscv64")),
    reason="needs clang-19 and qemu-user (apt-get install -y clang-19 qemu-user)",
)
def test_a_run_without_the_cross_libraries_names_them_and_checks_correctness(
    tmp_path, monkeypatch, caplog
):
    """The reported failure: every seed ended ``compile_error`` ("1 error generated"). With
    the check pointed at a root that has no cross libraries (this host has them), the run
    names the packages with their apt-get line and tests the candidates here instead."""
    import logging
    from functools import partial

    import evoforge
    from evoforge.archive import Status
    from evoforge.evaluators.native import _tools

    monkeypatch.setattr(shutil, "which", REAL_WHICH)  # the real tools, not the fixture's
    monkeypatch.setattr(
        _tools, "qemu_unavailable", partial(qemu_unavailable, root=str(tmp_path / "nothing"))
    )
    folder = tmp_path / "riscv_median"
    folder.mkdir()
    (folder / "problem.py").write_text(RISCV_PROBLEM)
    (folder / "seed.cpp").write_text(RISCV_SEED)
    with caplog.at_level(logging.WARNING, logger="evoforge"):
        result = evoforge.run(folder, budget=2, seed=1, db=tmp_path / "runs.db")
    assert result.status == "finished", result.reason
    assert result.seed.status is Status.OK, result.seed.artifacts
    assert "instructions" not in result.seed.metrics, result.seed.metrics  # built for here
    assert (
        "apt-get install -y libc6-dev-riscv64-cross libgcc-12-dev-riscv64-cross "
        "libstdc++-12-dev-riscv64-cross" in caplog.text
    ), caplog.text
