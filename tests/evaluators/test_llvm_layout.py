"""Code layout: the Ext-TSP formula, BOLT's CFG output read back, and the cached profile."""

from __future__ import annotations

import subprocess

import pytest

from evoforge.evaluators.llvm import BOLT_RUNTIME, check_order, ext_tsp, parse_bolt
from tests.evaluators.llvm_helpers import DATA, needs_bolt, real_corpus


def test_fall_through_jumps_and_distance_limits():
    sizes = [10, 20, 30]
    # 0 -> 1 falls through (0 has two successors: conditional), 1 -> 2 falls through
    # (one successor: 1.05), 0 -> 2 jumps forward 20 bytes, 2 -> 0 jumps back 60 bytes.
    edges = [[0, 1, 100], [0, 2, 10], [1, 2, 50], [2, 0, 7]]
    successors = [2, 1, 1]
    expected = 100 * 1.0 + 0.1 * (1 - 20 / 1024) * 10 + 1.05 * 50 + 0.1 * (1 - 60 / 640) * 7
    assert ext_tsp(sizes, edges, [0, 1, 2], successors) == pytest.approx(expected)
    # [0, 2, 1]: 0 -> 2 falls through, 0 -> 1 jumps forward 30, 1 -> 2 jumps back 50,
    # 2 -> 0 jumps back 40.
    swapped = (
        10 * 1.0
        + 0.1 * (1 - 30 / 1024) * 100
        + 0.1 * (1 - 50 / 640) * 50
        + 0.1 * (1 - 40 / 640) * 7
    )
    assert ext_tsp(sizes, edges, [0, 2, 1], successors) == pytest.approx(swapped)


def test_jumps_beyond_the_windows_score_nothing():
    sizes = [10, 2000, 10]
    assert ext_tsp(sizes, [[0, 2, 5]], [0, 1, 2], [1, 1, 1]) == 0.0  # forward 2000 > 1024
    assert ext_tsp(sizes, [[2, 0, 5]], [0, 1, 2], [1, 1, 1]) == 0.0  # backward > 640


@pytest.mark.parametrize(
    ("order", "words"),
    [
        ([0, 1], "not a permutation"),
        ([0, 1, 1], "not a permutation"),
        ([1, 0, 2], "entry block 0 must come first"),
        ((0, 1, 2), "expected a list"),
        ([0, 1, 2.0], "expected a list"),
        ([0, True, 2], "expected a list"),
    ],
)
def test_invalid_orders_are_explained(order, words):
    assert words in check_order(order, 3)
    assert check_order([0, 2, 1], 3) == ""


@pytest.mark.slow
@needs_bolt
def test_bolt_cfg_matches_bolts_own_counts_and_its_layout_scores_higher(tmp_path):
    """On a program written for this test, profiled with BOLT for real: the branch counts we
    read add up to the jump total BOLT prints (self-loops aside, as BOLT counts them), and
    BOLT's ext-tsp order scores about as well as the original order or better under our
    Ext-TSP (BOLT optimises the same model on its own size estimates, after shortening
    instructions, so a function may lose a little; Debian's BOLT 19 prints no Ext-TSP value)."""
    prog = tmp_path / "prog"
    subprocess.run(
        ["clang-19", "-O2", "-no-pie", "-fuse-ld=lld", "-Wl,--emit-relocs",
         str(DATA / "small.c"), "-o", str(prog)],
        check=True,
    )  # fmt: skip
    fdata = tmp_path / "prof.fdata"
    runtime = BOLT_RUNTIME.removeprefix("/usr/lib/")
    subprocess.run(
        ["llvm-bolt-19", str(prog), "-instrument", f"-runtime-instrumentation-lib={runtime}",
         f"-instrumentation-file={fdata}", "-o", str(tmp_path / "prog.instr")],
        check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run([str(tmp_path / "prog.instr")], cwd=tmp_path)
    text = subprocess.run(
        ["llvm-bolt-19", str(prog), f"-data={fdata}", "-reorder-blocks=ext-tsp",
         "-print-normalized", "-print-reordered", "-print-cache-metrics",
         "-o", str(tmp_path / "prog.bolt")],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    parsed = parse_bolt(text)
    functions = parsed["functions"]
    assert {f["name"] for f in functions} >= {"main"}
    jumps = int(text.split("TSP score:")[1].split("out of")[1].split(")")[0])
    ours = sum(c for f in functions for s, d, c in f["edges"] if s != d)
    assert ours == pytest.approx(jumps, rel=1e-3)
    totals = [0.0, 0.0]
    for f in functions:
        identity = list(range(len(f["sizes"])))
        assert check_order(f["bolt"], len(f["sizes"])) == ""
        bolt = ext_tsp(f["sizes"], f["edges"], f["bolt"], f["successors"])
        original = ext_tsp(f["sizes"], f["edges"], identity, f["successors"])
        assert bolt >= 0.98 * original
        totals[0] += bolt
        totals[1] += original
    assert totals[0] >= 0.99 * totals[1]


@pytest.mark.slow
@needs_bolt
def test_profile_is_prepared_once_and_reused(monkeypatch):
    from evoforge.evaluators.llvm import load_profile, prepare_profile

    real_corpus(monkeypatch, ["lz4"])
    folder = prepare_profile()
    before = (folder / "cfg.json").stat().st_mtime_ns
    assert prepare_profile() == folder
    assert (folder / "cfg.json").stat().st_mtime_ns == before  # cached: not rebuilt
    profile = load_profile()
    bolt = sum(f["bolt_score"] for f in profile["functions"])
    original = sum(f["original_score"] for f in profile["functions"])
    assert bolt > original > 0


@pytest.mark.slow
@needs_bolt
def test_applying_the_original_and_bolts_orders_reproduces_their_binaries(monkeypatch, tmp_path):
    """The orders go to the compiler (basic-block sections): the original order rebuilt gives
    the original binary's I-cache misses, BOLT's order about BOLT's binary's."""
    from evoforge.evaluators.llvm import apply_layout, load_profile, prepare_profile

    real_corpus(monkeypatch, ["lz4"])
    prepare_profile()
    profile = load_profile()
    functions = profile["functions"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    same = apply_layout(
        {f["name"]: list(range(len(f["sizes"]))) for f in functions}, tmp_path / "a"
    )
    assert same["functions_applied"] >= 20
    assert same["i1_misses"] == pytest.approx(profile["i1_misses_original"], rel=0.01)
    bolt = apply_layout({f["name"]: f["bolt"] for f in functions}, tmp_path / "b")
    assert bolt["i1_misses"] == pytest.approx(profile["i1_misses_bolt"], rel=0.15)
    assert bolt["i1_misses"] < 0.5 * same["i1_misses"]
