"""Shared pieces of the LLVM evaluator tests: skips, the test corpus, running one stage."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from evoforge.evaluators.llvm import INSTALL, LlvmEvaluator, corpus_ready, missing_tools
from evoforge.problems import load_problem

DATA = Path(__file__).parent / "llvm_data"
ROOT = Path(__file__).resolve().parents[2]
# The cache `evoforge problems setup` prepared, found before the tests move HOME away.
REAL_CACHE = Path(
    os.environ.get("EVOFORGE_CACHE")
    or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "evoforge")
)

needs_llvm = pytest.mark.skipif(
    bool(missing_tools(("clang-19", "opt-19", "llc-19", "llvm-link-19", "ld.lld-19"))),
    reason=f"LLVM 19 is not installed: {INSTALL}",
)
needs_bolt = pytest.mark.skipif(
    bool(missing_tools(("clang-19", "llvm-bolt-19", "ld.lld-19"))),
    reason=f"BOLT 19 is not installed: {INSTALL}",
)


def real_corpus(monkeypatch, names=("lz4", "ppmd", "inflate64", "brotli_dec")) -> None:
    """Point the evaluator at the prepared corpus cache, or skip saying how to prepare it."""
    monkeypatch.setenv("EVOFORGE_CACHE", str(REAL_CACHE))
    why = corpus_ready(list(names))
    if why:
        pytest.skip(f"{why} (CI's .ci/run prepares it)")


def small_bitcode(tmp_path: Path, optimized: bool = False) -> Path:
    """tests/evaluators/llvm_data/small.c (written for these tests) as pre-optimization
    bitcode at -Oz, or after stock default<Oz>."""
    bc = tmp_path / "small.bc"
    subprocess.run(
        ["clang-19", "-Oz", "-Xclang", "-disable-llvm-passes", "-emit-llvm", "-c",
         str(DATA / "small.c"), "-o", str(bc)],
        check=True,
    )  # fmt: skip
    if not optimized:
        return bc
    out = tmp_path / "small.Oz.bc"
    subprocess.run(["opt-19", "-passes=default<Oz>", str(bc), "-o", str(out)], check=True)
    return out


def small_corpus(tmp_path: Path, monkeypatch) -> None:
    """A corpus cache whose ``quick`` corpus (the ppmd library's slot) is small.c.

    Lets the evaluator's full pipeline (sandboxed policy, broker, opt, llc, size) run on code
    written for these tests instead of a third-party corpus.
    """
    cache = tmp_path / "cache"
    folder = cache / "llvm" / "libs" / "ppmd"
    folder.mkdir(parents=True)
    bc = small_bitcode(tmp_path)
    (folder / "ppmd.bc").write_bytes(bc.read_bytes())
    subprocess.run(
        ["opt-19", "-passes=default<Oz>", str(bc), "-o", str(folder / "ppmd.Oz.bc")], check=True
    )
    (folder / "ppmd.workload.o").write_bytes(b"")  # not linked: no instruction counts here
    (cache / "llvm" / "manifest.json").write_text(
        json.dumps({"libraries": {"ppmd": {"bitcode_sha256": "test"}}})
    )
    monkeypatch.setenv("EVOFORGE_CACHE", str(cache))


def run_quick(problem_name: str, source: str, **options) -> object:
    """Run ``source`` on the problem's ``quick`` stage with the real evaluator."""
    problem = load_problem(ROOT / "problems" / "builtin" / problem_name)
    problem = replace(problem, tuning=None, options={**problem.options, **options})

    async def go():
        evaluator = LlvmEvaluator(problem)
        await evaluator.start()
        try:
            return await evaluator.run_stage(source, problem.stages[0])
        finally:
            await evaluator.close()

    return asyncio.run(go())
