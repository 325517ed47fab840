"""The corpus cache: prepared once, checked by hash, and what a host without LLVM is told."""

from __future__ import annotations

import json
import subprocess

import pytest
from click.testing import CliRunner

from evoforge.evaluators.llvm import LIBRARIES, LlvmEvaluator, _corpus, corpus_ready, setup_corpora
from evoforge.evolve.cli import cli


def _fake_cache(tmp_path, monkeypatch, names):
    cache = tmp_path / "cache"
    monkeypatch.setenv("EVOFORGE_CACHE", str(cache))
    for name in names:
        files = _corpus.library_files(name)
        files.bitcode.parent.mkdir(parents=True, exist_ok=True)
        for path in (files.bitcode, files.optimized, files.workload):
            if path is not None:
                path.write_bytes(b"x")
    (cache / "llvm").mkdir(parents=True, exist_ok=True)
    (cache / "llvm" / "manifest.json").write_text(json.dumps({"libraries": {n: {} for n in names}}))
    return cache / "llvm"


def test_a_prepared_cache_is_used_without_downloading_or_compiling(tmp_path, monkeypatch):
    _fake_cache(tmp_path, monkeypatch, list(LIBRARIES))

    def refuse(*args, **kwargs):
        raise AssertionError(f"setup ran a command although the cache is ready: {args[0]}")

    monkeypatch.setattr(subprocess, "run", refuse)
    assert corpus_ready() == ""
    setup_corpora()  # idempotent: returns at once


def test_a_missing_library_is_named_with_the_command_that_prepares_it(tmp_path, monkeypatch):
    _fake_cache(tmp_path, monkeypatch, ["lz4"])
    why = corpus_ready(["lz4", "ppmd"])
    assert "ppmd" in why and "lz4," not in why
    assert "evoforge problems setup" in why


def test_an_sdist_with_the_wrong_hash_is_refused(tmp_path, monkeypatch):
    cache = _fake_cache(tmp_path, monkeypatch, [])
    lib = LIBRARIES["lz4"]

    def fake_pip(argv, **kwargs):
        dest = argv[argv.index("--dest") + 1]
        with open(f"{dest}/{lib.package}-{lib.version}.tar.gz", "wb") as f:
            f.write(b"not the real sdist")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(subprocess, "run", fake_pip)
    (cache / "sdists").mkdir(parents=True)
    with pytest.raises(RuntimeError, match="SHA-256"):
        _corpus._fetch(lib, cache, log=lambda line: None)


def test_without_llvm_the_evaluator_and_problems_say_what_to_install(monkeypatch):
    import shutil

    real_which = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda name, *a, **k: None if "19" in name else real_which(name)
    )
    availability = LlvmEvaluator.availability()
    assert not availability.available
    assert "install clang-19 llvm-19 lld-19 bolt-19 (apt-get install -y" in availability.reason
    out = CliRunner().invoke(cli, ["problems"])
    assert out.exit_code == 0, out.output
    line = out.output.split("llvm_inlining", 1)[1].splitlines()[1]
    assert "cannot run here" in line and "apt-get install -y clang-19" in line
    out = CliRunner().invoke(cli, ["run", "llvm_inlining", "--budget", "2"])
    assert out.exit_code == 1 and "install clang-19 llvm-19 lld-19 bolt-19" in out.output
