"""The host tools a native evaluation needs, and why a measure cannot run here.

Compilers: ``clang-19`` (C), ``clang++-19`` (C++), ``rustc`` (Rust, where installed). Measures:
valgrind (``callgrind``, ``cachegrind``), ``llvm-mca-19`` (``mca:<cpu>``), ``qemu-<arch>`` with
a cross C library (``qemu:<arch>``). Each missing tool is named with the Debian package that
brings it.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess

INSTALL = "apt-get install -y clang-19 llvm-19 valgrind"
COMPILERS = {"c": "clang-19", "cpp": "clang++-19", "rust": "rustc"}
SOURCE_NAMES = {"c": "candidate.c", "cpp": "candidate.cpp", "rust": "candidate.rs"}
QEMU_ARCHES = {"riscv64": "riscv64-linux-gnu", "aarch64": "aarch64-linux-gnu"}
_PACKAGES = {
    "clang-19": "clang-19",
    "clang++-19": "clang-19",
    "llvm-mca-19": "llvm-19",
    "llvm-cxxfilt-19": "llvm-19",
    "valgrind": "valgrind",
    "callgrind_annotate": "valgrind",
    "rustc": "rustup (https://rustup.rs) or `apt-get install -y rustc`",
    "ld.lld-19": "lld-19",
    "llvm-symbolizer-19": "llvm-19",
}


def tool(name: str) -> str | None:
    """The path of ``name`` on PATH (or in ``~/.cargo/bin`` for ``rustc``), or None."""
    found = shutil.which(name)
    if found is None and name == "rustc":
        cargo = os.path.expanduser("~/.cargo/bin/rustc")
        found = cargo if os.access(cargo, os.X_OK) else None
    return found


def missing(names: tuple[str, ...]) -> str:
    """Why some of ``names`` cannot be used ("" when all are installed), with the command
    that installs them."""
    absent = [n for n in names if tool(n) is None]
    if not absent:
        return ""
    packages = sorted({_PACKAGES.get(n, n) for n in absent})
    apt = [p for p in packages if " " not in p]
    other = [p for p in packages if " " in p]
    fixes = ([f"apt-get install -y {' '.join(apt)}"] if apt else []) + other
    return f"{', '.join(absent)} not installed (install: {'; '.join(fixes)})"


def measure_tools(language: str, measure: str) -> dict[str, str]:
    """The commands compiling ``language`` and running ``measure`` need, each with how to
    install it (a spec's ``requires``, so ``evoforge problems`` names what is missing)."""
    kind, _, arch = measure.partition(":")
    names = [COMPILERS[language]]
    names += {
        "callgrind": ["valgrind", "callgrind_annotate"],
        "cachegrind": ["valgrind"],
        "mca": ["llvm-mca-19", "llvm-cxxfilt-19"],
        "qemu": [f"qemu-{arch}", "ld.lld-19"],
    }.get(kind, [])
    return {name: _install_hint(name) for name in names}


def _install_hint(name: str) -> str:
    if name.startswith("qemu-"):
        return f"apt-get install -y {qemu_packages(name.removeprefix('qemu-'))}"
    package = _PACKAGES.get(name, name)
    return package if " " in package else f"apt-get install -y {package}"


def measure_unavailable(language: str, measure: str) -> str:
    """Why ``measure`` of a ``language`` program cannot run on this host, or ""."""
    kind, _, argument = measure.partition(":")
    why = missing((COMPILERS[language],))
    if why:
        return why
    if kind in ("callgrind", "cachegrind"):
        return missing(("valgrind", "callgrind_annotate"))
    if kind == "mca":
        if language == "rust":
            return "mca measures C and C++ only (clang -S); use callgrind for Rust"
        return missing(("llvm-mca-19", "llvm-cxxfilt-19")) or _mca_cpu_unknown(argument)
    if kind == "qemu":
        return qemu_unavailable(argument, language)
    return ""


def qemu_unavailable(arch: str, language: str = "c", *, root: str = "/") -> str:
    """Why ``qemu:<arch>`` cannot build and run a ``language`` program here ("device
    unavailable: ..." with the fix), or "".

    Each cross library is checked by a file the static build needs (the C library's headers
    and ``libc.a``, ``libgcc.a``, for C++ ``libstdc++.a`` and its headers), so a host with
    some of the packages but not all is told which to add, instead of every candidate ending
    ``compile_error`` ("fatal error: 'iostream' file not found"). ``root`` is where ``/usr``
    is looked for (tests point it at a made-up tree).
    """
    triple = QEMU_ARCHES.get(arch)
    if triple is None:
        return f"qemu:{arch}: unknown architecture; use one of {', '.join(QEMU_ARCHES)}"
    debian = arch.replace("aarch64", "arm64")
    if tool(f"qemu-{arch}") is None:
        return (
            f"device unavailable: qemu-{arch} is not installed "
            f"(apt-get install -y {qemu_packages(arch)})"
        )
    usr = os.path.join(root, "usr")
    gcc = os.path.join(usr, "lib", "gcc-cross", triple, "*")
    needed = [
        ("the C library", f"libc6-dev-{debian}-cross", (f"{usr}/{triple}/include/stdio.h",)),
        ("the C library", f"libc6-dev-{debian}-cross", (f"{usr}/{triple}/lib/libc.a",)),
        ("libgcc", f"libgcc-12-dev-{debian}-cross", (f"{gcc}/libgcc.a",)),
    ]
    if language == "cpp":
        needed += [
            ("libstdc++", f"libstdc++-12-dev-{debian}-cross", (f"{gcc}/libstdc++.a",)),
            (
                "libstdc++",
                f"libstdc++-12-dev-{debian}-cross",
                (f"{usr}/{triple}/include/c++/*/iostream",),
            ),
        ]
    absent: dict[str, str] = {}  # package -> what it brings
    for what, package, patterns in needed:
        if not any(glob.glob(pattern) for pattern in patterns):
            absent.setdefault(package, what)
    if absent:
        return (
            f"device unavailable: no {triple} {', '.join(dict.fromkeys(absent.values()))} "
            f"for a static cross build (apt-get install -y {' '.join(absent)})"
        )
    if tool("ld.lld-19") is None:
        return "device unavailable: ld.lld-19 is not installed (apt-get install -y lld-19)"
    return ""


def qemu_packages(arch: str) -> str:
    """The Debian packages a ``qemu:<arch>`` measure needs."""
    debian = arch.replace("aarch64", "arm64")
    return (
        f"qemu-user lld-19 libc6-dev-{debian}-cross libgcc-12-dev-{debian}-cross "
        f"libstdc++-12-dev-{debian}-cross"
    )


@functools.cache
def mca_cpus() -> frozenset[str]:
    """The CPU models llvm-mca-19 knows for x86-64 (``-mcpu=help``)."""
    try:
        text = subprocess.run(
            ["llvm-mca-19", "-mtriple=x86_64-unknown-linux-gnu", "-mcpu=help"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    cpus: set[str] = set()
    section = False
    for line in (text.stdout + text.stderr).splitlines():
        if line.startswith("Available CPUs"):
            section = True
        elif line.startswith("Available features"):
            break
        elif section and line.strip():
            cpus.add(line.split()[0])
    return frozenset(cpus)


def _mca_cpu_unknown(cpu: str) -> str:
    cpus = mca_cpus()
    if cpus and cpu not in cpus:
        close = sorted(c for c in cpus if c[:3] == cpu[:3])[:6]
        return f"mca:{cpu}: llvm-mca-19 knows no x86-64 CPU {cpu!r}" + (
            f" (close: {', '.join(close)})" if close else ""
        )
    return ""


def libraries_missing(*, openmp: bool = False, sanitize: tuple[str, ...] = ()) -> str:
    """Why the libraries an OpenMP build (libomp) or a ThreadSanitizer build of one (LLVM's
    Archer) needs are absent, with the command that installs them; "" when present. For a
    spec's ``ready()``: without them such a problem cannot run at all."""
    clang = tool("clang-19")
    if clang is None:
        return "clang-19 not installed (install: apt-get install -y clang-19 libomp-19-dev)"
    lib = os.path.normpath(os.path.join(os.path.dirname(os.path.realpath(clang)), "..", "lib"))
    wanted = ["libomp.so"] if openmp else []
    wanted += ["libarcher.so"] if openmp and "thread" in sanitize else []
    if absent := [name for name in wanted if not os.path.exists(os.path.join(lib, name))]:
        return (
            f"{', '.join(absent)} not found in {lib} (OpenMP; install: apt-get install -y "
            "libomp-19-dev)"
        )
    return ""


def archer_library() -> str | None:
    """LLVM's Archer (``libarcher.so``, beside clang-19's libraries): loaded into a
    ThreadSanitizer build of an OpenMP program, it tells TSan what OpenMP synchronises, so a
    correct ``reduction`` or barrier is not reported as a race. None when absent."""
    clang = tool("clang-19")
    if clang is None:
        return None
    path = os.path.join(os.path.dirname(os.path.realpath(clang)), "..", "lib", "libarcher.so")
    return os.path.normpath(path) if os.path.exists(path) else None


@functools.cache
def rust_sysroot() -> str | None:
    """The folder of the Rust toolchain (``rustc --print sysroot``), or None without one.

    Installed by rustup it lives under ``~/.rustup``, outside the candidates' minimal root:
    the runner binds it in (read-only), and compiles with its own ``bin/rustc``, not rustup's
    proxy in ``~/.cargo/bin`` (which finds its toolchains through ``HOME``, the workdir there).
    """
    rustc = tool("rustc")
    if rustc is None:
        return None
    try:
        done = subprocess.run(
            [rustc, "--print", "sysroot"], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sysroot = done.stdout.strip()
    return sysroot if done.returncode == 0 and os.path.isdir(sysroot) else None


def compile_command(
    language: str, source: str, output: str, flags: tuple[str, ...], *, asm_cpu: str = ""
) -> list[str]:
    """The command that compiles ``source`` to ``output`` (assembly for ``asm_cpu``)."""
    if language == "rust":
        sysroot = rust_sysroot()
        own = os.path.join(sysroot, "bin", "rustc") if sysroot else ""
        rustc = own if own and os.access(own, os.X_OK) else tool("rustc") or "rustc"
        return [rustc, "--edition=2021", *flags, "-o", output, source]
    command = [COMPILERS[language], *flags, "-g", "-fdebug-prefix-map=" + os.getcwd() + "=."]
    if asm_cpu:
        command += [f"-march={asm_cpu}", "-S", "-g0", "-fno-asynchronous-unwind-tables"]
    return [*command, "-o", output, source, *([] if asm_cpu else ["-lm"])]
