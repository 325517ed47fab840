"""Corpora of real C code for the compiler-policy problems, prepared once into a cache.

Third-party sources are never part of this repository: :func:`setup` downloads pinned
sdists from PyPI with ``pip download`` (sdists that bundle C libraries), checks their SHA-256,
extracts the C files, and compiles each library once into LLVM bitcode:

- ``<lib>.bc``: every file at ``-Oz`` with LLVM's passes disabled, linked with ``llvm-link``
  (what ``opt -passes=default<Oz>`` then optimises, with the policy as its inliner);
- ``<lib>.Oz.bc``: the same after stock ``default<Oz>`` (the input of ``llc``'s register
  allocator for the priority problem);
- ``<lib>.workload.o``: a workload written for evoforge (``workloads/<lib>.c``), linked with
  the library to count instructions under callgrind.

The cache lives in ``$EVOFORGE_CACHE/llvm`` (default ``~/.cache/evoforge/llvm``) with a
``manifest.json`` of checksums; :func:`setup` is idempotent (about 2 minutes the first time,
mostly pip preparing sdist metadata; well under a second when everything is there), and
:func:`ready` says what is missing. Evaluations only read the cache.
"""

from __future__ import annotations

import concurrent.futures
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from evoforge.evaluators.llvm._tools import llvm_version, tool

WORKLOADS = Path(__file__).parent / "workloads"
CACHE_ENV = "EVOFORGE_CACHE"


@dataclass(frozen=True)
class Library:
    """A C library taken from a PyPI sdist.

    Attributes:
        name: our name for it (``lz4``).
        package, version, sha256: the sdist (``pip download package==version``) and its hash.
        sources: globs of the C files to compile, relative to the sdist's top folder.
        includes: include folders, relative to the same.
        workload: whether ``workloads/<name>.c`` exists (instruction counts need one).
    """

    name: str
    package: str
    version: str
    sha256: str
    sources: tuple[str, ...]
    includes: tuple[str, ...]
    workload: bool = False


LIBRARIES: dict[str, Library] = {
    lib.name: lib
    for lib in (
        Library(
            "lz4",
            "lz4",
            "4.4.5",
            "5f0b9e53c1e82e88c10d7c180069363980136b9d7a8306c4dca4f760d60c39f0",
            ("lz4libs/lz4.c", "lz4libs/lz4hc.c", "lz4libs/lz4frame.c", "lz4libs/xxhash.c"),
            ("lz4libs",),
            workload=True,
        ),
        Library(
            "ppmd",
            "pyppmd",
            "1.3.1",
            "ced527f08ade4408c1bfc5264e9f97ffac8d221c9d13eca4f35ec1ec0c7b6b2e",
            ("src/lib/ppmd/Ppmd7*.c", "src/lib/ppmd/Ppmd8*.c"),
            ("src/lib/ppmd",),
            workload=True,
        ),
        Library(
            "inflate64",
            "inflate64",
            "1.0.4",
            "b398c686960c029777afc0ed281a86f66adb956cfc3fbf6667cc6453f7b407ce",
            ("src/lib/*.c",),
            ("src/lib",),
        ),
        Library(
            "brotli_dec",
            "brotli",
            "1.2.1",
            "02b2f7b5a83485efe448a44ddf7983def05c3bb1dcf917d4f7154070260e13de",
            ("c/common/*.c", "c/dec/*.c"),
            ("c/include",),
        ),
    )
}

CORPORA: dict[str, tuple[str, ...]] = {
    "quick": ("ppmd",),
    "train": ("lz4", "ppmd"),
    "held_out": ("inflate64", "brotli_dec"),
}
"""Named corpora the problems' stages use: training (``quick`` is its cheap part) and
held-out (never in a prompt: scored only at the end of a session)."""


def cache_dir() -> Path:
    """``$EVOFORGE_CACHE/llvm``, else ``$XDG_CACHE_HOME/evoforge/llvm`` or ``~/.cache/...``."""
    root = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "evoforge"
    )
    return Path(root) / "llvm"


@dataclass(frozen=True)
class LibraryFiles:
    """Where one prepared library's files are in the cache."""

    bitcode: Path
    optimized: Path
    workload: Path | None
    source_dir: Path
    includes: tuple[Path, ...]


def library_files(name: str, cache: Path | None = None) -> LibraryFiles:
    lib = LIBRARIES[name]
    root = (cache or cache_dir()) / "libs" / name
    return LibraryFiles(
        root / f"{name}.bc",
        root / f"{name}.Oz.bc",
        root / f"{name}.workload.o" if lib.workload else None,
        root / "src",
        tuple(root / "src" / inc for inc in lib.includes),
    )


def corpus(name: str) -> tuple[str, ...]:
    """The libraries of a named corpus (or a ``+``-joined list of library names)."""
    if name in CORPORA:
        return CORPORA[name]
    names = tuple(name.split("+"))
    unknown = [n for n in names if n not in LIBRARIES]
    if unknown:
        raise KeyError(
            f"unknown corpus or library {', '.join(unknown)}; corpora: {', '.join(CORPORA)}; "
            f"libraries: {', '.join(LIBRARIES)}"
        )
    return names


def corpus_ready(names: Iterable[str] = tuple(LIBRARIES), cache: Path | None = None) -> str:
    """Why the cache cannot serve ``names`` yet ("" when it can). Costs a few ``stat`` calls."""
    manifest = read_manifest(cache or cache_dir())
    missing = []
    for name in names:
        files = library_files(name, cache)
        needed = [files.bitcode, files.optimized] + ([files.workload] if files.workload else [])
        if name not in manifest.get("libraries", {}) or not all(p.is_file() for p in needed):
            missing.append(name)
    if missing:
        return (
            f"the corpus of {', '.join(missing)} is not prepared in {cache or cache_dir()}; "
            "run `evoforge problems setup llvm_inlining` (fetches sdists from PyPI once)"
        )
    return ""


def setup_corpora(
    names: Iterable[str] = tuple(LIBRARIES),
    cache: Path | None = None,
    *,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> Path:
    """Prepare ``names`` in the cache (idempotent); returns the cache folder.

    Raises:
        RuntimeError: a download, a checksum or a compilation failed (the message says which).
        FileNotFoundError: an LLVM tool is missing (the message says how to install it).
    """
    cache = cache or cache_dir()
    names = [n for n in names if corpus_ready([n], cache)]
    if not names:
        return cache
    (cache / "sdists").mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        sdists = dict(
            zip(names, pool.map(lambda n: _fetch(LIBRARIES[n], cache, log), names), strict=False)
        )
    manifest = read_manifest(cache)
    manifest["llvm"] = llvm_version()
    for name in names:
        log(f"evoforge: compiling {name} to LLVM bitcode")
        manifest.setdefault("libraries", {})[name] = _build(LIBRARIES[name], sdists[name], cache)
        (cache / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return cache


def _fetch(lib: Library, cache: Path, log: Callable[[str], None]) -> Path:
    """The sdist in the cache, downloaded with pip if missing; checksum verified."""
    folder = cache / "sdists"
    found = _sdist(folder, lib)
    if found is None or _sha256(found) != lib.sha256:
        log(f"evoforge: pip download {lib.package}=={lib.version} (its sdist ships the C code)")
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            done = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
                + ["--no-binary", ":all:", "--dest", tmp, f"{lib.package}=={lib.version}"],
                capture_output=True,
                text=True,
            )
            got = _sdist(Path(tmp), lib)
            if done.returncode != 0 or got is None:
                raise RuntimeError(
                    f"pip download {lib.package}=={lib.version} failed: "
                    f"{(done.stderr or done.stdout).strip()[-800:]}"
                )
            found = folder / got.name
            shutil.move(got, found)
    digest = _sha256(found)
    if digest != lib.sha256:
        raise RuntimeError(
            f"{found.name} has SHA-256 {digest}, expected {lib.sha256}; delete it and retry"
        )
    return found


def _sdist(folder: Path, lib: Library) -> Path | None:
    stem = lib.package.replace("-", "_")
    for pattern in (f"{lib.package}-{lib.version}.tar.gz", f"{stem}-{lib.version}.tar.gz"):
        if (folder / pattern).is_file():
            return folder / pattern
    return None


def _build(lib: Library, sdist: Path, cache: Path) -> dict[str, str]:
    files = library_files(lib.name, cache)
    root = files.source_dir.parent
    if root.exists():
        shutil.rmtree(root)
    files.source_dir.mkdir(parents=True)
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        wanted = [
            m
            for m in archive.getmembers()
            if m.isfile() and m.name.endswith((".c", ".h")) and ".." not in m.name
        ]
        for member in wanted:
            member.name = member.name[len(top) + 1 :]
            archive.extract(member, files.source_dir, filter="data")
    sources = sorted(
        path for pattern in lib.sources for path in glob.glob(str(files.source_dir / pattern))
    )
    if not sources:
        raise RuntimeError(f"{sdist.name} has no files matching {lib.sources}")
    includes = [f"-I{inc}" for inc in files.includes]
    clang, objects = tool("clang-19"), []
    for index, source in enumerate(sources):
        out = root / f"{index:02d}_{Path(source).stem}.bc"
        _check(
            [clang, "-Oz", "-w", "-Xclang", "-disable-llvm-passes", "-emit-llvm", "-c"]
            + includes
            + [source, "-o", str(out)]
        )
        objects.append(str(out))
    _check([tool("llvm-link-19"), *objects, "-o", str(files.bitcode)])
    _check([tool("opt-19"), "-passes=default<Oz>", str(files.bitcode), "-o", str(files.optimized)])
    if files.workload is not None:
        _check(
            [
                clang,
                "-O2",
                "-w",
                "-c",
                *includes,
                str(WORKLOADS / f"{lib.name}.c"),
                "-o",
                str(files.workload),
            ]
        )
    for path in objects:
        os.unlink(path)
    return {
        "sdist": sdist.name,
        "sha256": lib.sha256,
        "sources": str(len(sources)),
        "bitcode_sha256": _sha256(files.bitcode),
    }


def _check(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} ... failed: {done.stderr.strip()[-1500:]}")


def read_manifest(cache: Path) -> dict:
    try:
        return json.loads((cache / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
