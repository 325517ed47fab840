"""`evoforge problems` names each native problem's missing tool and the apt-get command that
installs it: the compiler, the measure's tools (valgrind, llvm-mca, qemu) and libomp."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evoforge.evaluators.native import libraries_missing, measure_tools
from evoforge.evolve.cli import cli

pytestmark = pytest.mark.skipif(
    shutil.which("clang-19") is None, reason="needs clang-19 (apt-get install -y clang-19)"
)


def problems_output() -> dict[str, str]:
    """Each problem's status line of ``evoforge problems``."""
    out = CliRunner().invoke(cli, ["problems"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    return {
        line.split()[0]: lines[i + 1].strip()
        for i, line in enumerate(lines[:-1])
        if line and not line[0].isspace()
    }


def only_on_path(monkeypatch, folder: Path, *commands: str) -> None:
    """PATH is ``folder``, holding links to ``commands`` only."""
    folder.mkdir(exist_ok=True)
    for name in commands:
        os.symlink(shutil.which(name), folder / name)
    monkeypatch.setenv("PATH", str(folder))


def test_an_empty_path_names_the_compiler_and_its_package(tmp_path, monkeypatch):
    only_on_path(monkeypatch, tmp_path / "bin")
    rows = problems_output()
    for name in ("pie_lis", "pie_sieve", "graph_parallel"):
        assert rows[name].startswith("cannot run here"), rows[name]
        assert "clang++-19" in rows[name] and "apt-get install -y clang-19" in rows[name]


def clang_without_libomp(folder: Path) -> None:
    """``clang-19``/``clang++-19`` in ``folder/llvm/bin`` that run the real compilers but have
    no ``../lib/libomp.so`` beside them: a host without libomp-19-dev."""
    fake = folder / "llvm" / "bin"
    fake.mkdir(parents=True)
    for name in ("clang-19", "clang++-19"):
        (fake / name).write_text(f'#!/bin/sh\nexec {shutil.which(name)} "$@"\n')
        (fake / name).chmod(0o755)
    (folder / "bin").mkdir()
    for name in ("clang-19", "clang++-19"):
        os.symlink(fake / name, folder / "bin" / name)


@pytest.mark.parametrize("libomp", [True, False], ids=["with-libomp", "without-libomp"])
def test_a_missing_measure_tool_is_named_with_its_package(tmp_path, monkeypatch, libomp):
    """Only the compiler: the callgrind problems name valgrind; graph_parallel (wall time)
    needs nothing more than the compiler and libomp, whichever of the two this host lacks
    (the README's package list had no libomp-19-dev, and this test assumed it)."""
    if libomp:
        if libraries_missing(openmp=True, sanitize=("thread",)):
            pytest.skip("needs libomp-19-dev (apt-get install -y libomp-19-dev)")
        only_on_path(monkeypatch, tmp_path / "bin", "clang-19", "clang++-19")
    else:
        clang_without_libomp(tmp_path)
        monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    rows = problems_output()
    assert rows["pie_lis"].startswith("cannot run here: valgrind, callgrind_annotate not found")
    assert "apt-get install -y valgrind" in rows["pie_lis"]
    if libomp:
        assert rows["graph_parallel"].startswith("runs here")  # wall time: no valgrind needed
    else:
        assert rows["graph_parallel"].startswith("cannot run here: libomp.so"), rows
        assert "apt-get install -y libomp-19-dev" in rows["graph_parallel"]
        assert "valgrind" not in rows["graph_parallel"]


def test_missing_libomp_is_named_with_its_package(tmp_path, monkeypatch):
    """A clang-19 whose ../lib has no libomp (a script standing in for it)."""
    fake = tmp_path / "llvm" / "bin"
    fake.mkdir(parents=True)
    for name in ("clang-19", "clang++-19"):
        (fake / name).write_text("#!/bin/sh\nexit 1\n")
        (fake / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(fake))
    why = libraries_missing(openmp=True, sanitize=("thread",))
    assert "libomp.so, libarcher.so not found" in why and "apt-get install -y libomp-19-dev" in why
    assert problems_output()["graph_parallel"].startswith(f"cannot run here: {why}")
    assert libraries_missing() == ""  # a problem without OpenMP needs neither


def test_measure_tools_name_each_measure_s_commands():
    assert set(measure_tools("c", "callgrind")) == {"clang-19", "valgrind", "callgrind_annotate"}
    assert set(measure_tools("cpp", "mca:znver4")) == {
        "clang++-19",
        "llvm-mca-19",
        "llvm-cxxfilt-19",
    }
    qemu = measure_tools("c", "qemu:riscv64")
    assert "qemu-user" in qemu["qemu-riscv64"] and "libc6-dev-riscv64-cross" in qemu["qemu-riscv64"]
    assert set(measure_tools("cpp", "wall")) == {"clang++-19"}
    assert all(hint.startswith("apt-get install -y ") for hint in qemu.values())
