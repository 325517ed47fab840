"""The LLVM 19 tools the compiler-policy problems drive, and how to get them."""

from __future__ import annotations

import shutil
import subprocess

TOOLS = ("clang-19", "opt-19", "llc-19", "llvm-link-19", "ld.lld-19", "llvm-bolt-19")
INSTALL = (
    "install clang-19 llvm-19 lld-19 bolt-19 (apt-get install -y clang-19 llvm-19 lld-19 bolt-19)"
)
REQUIRES = {
    "clang-19": INSTALL,
    "opt-19": INSTALL,
    "llc-19": INSTALL,
    "llvm-link-19": INSTALL,
    "ld.lld-19": INSTALL,
}
"""For a spec's ``requires``: the commands every LLVM problem needs, with how to get them."""

BOLT_RUNTIME = "/usr/lib/llvm-19/lib/libbolt_rt_instr.a"
"""BOLT's instrumentation runtime (Debian's default path in llvm-bolt-19 is wrong: give it)."""


def tool(name: str) -> str:
    """The path of ``name`` (e.g. ``opt-19``).

    Raises:
        FileNotFoundError: it is not installed; the message says how to install it.
    """
    path = shutil.which(name)
    if path is None:
        raise FileNotFoundError(f"{name} not found; {INSTALL}")
    return path


def missing_tools(names: tuple[str, ...] = TOOLS) -> list[str]:
    return [name for name in names if shutil.which(name) is None]


def llvm_version() -> str:
    """``opt-19 --version``'s version line (part of the corpus cache key)."""
    try:
        out = subprocess.run([tool("opt-19"), "--version"], capture_output=True, text=True)
    except FileNotFoundError:
        return "missing"
    line = next((ln for ln in out.stdout.splitlines() if "version" in ln.lower()), "")
    return line.strip()
