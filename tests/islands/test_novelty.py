"""The novelty filter: equivalent candidates are always rejected, near-duplicates sometimes."""

from __future__ import annotations

import numpy as np
import pytest

from evoforge.evaluators import Status
from evoforge.islands import NoveltyFilter, Verdict, ast_key, fingerprint, jaccard
from evoforge.islands._novelty import SHORTLIST, sketch
from tests.islands.conftest import SEED, variant


def make_filter(archive, run_id, *, similarity=0.95, rejection=0.5):
    return NoveltyFilter(archive, run_id, similarity=similarity, rejection=rejection)


def test_an_equivalent_of_a_stored_program_is_rejected(grid_archive, run_id, store):
    stored = store(SEED, elite=False, status=Status.RUNTIME_ERROR, ast_key=ast_key(SEED))
    renamed = (
        "# EVOLVE-BLOCK-START\ndef main():\n    first = 0.5  # a comment\n"
        "    second = 0.25\n\n    return [first, second]\n# EVOLVE-BLOCK-END\n"
    )
    verdict = make_filter(grid_archive, run_id).check(renamed, 0, np.random.default_rng(0))
    assert verdict == Verdict("ast", stored.id, 1.0, ast_key(SEED))
    assert verdict.artifacts() == {
        "error": verdict.message(),
        "rule": "ast",
        "duplicate_of": stored.id,
        "similarity": "1.000",
    }
    assert "novelty filter" in verdict.message() and "\n" not in verdict.message()


def test_a_new_program_passes(grid_archive, run_id, store):
    store(SEED, ast_key=ast_key(SEED))
    novelty = make_filter(grid_archive, run_id, rejection=1.0)
    assert novelty.check(variant(7, lines=5), 0, np.random.default_rng(0)) is None


def test_an_equivalent_in_flight_is_caught_until_it_ends(grid_archive, run_id):
    novelty = make_filter(grid_archive, run_id)
    key = ast_key(SEED)
    novelty.begin(key)
    novelty.begin(key)
    verdict = novelty.check(SEED.replace("b", "beta"), 0, np.random.default_rng(0))
    assert verdict is not None and verdict.rule == "ast" and verdict.key == key
    novelty.end(key)
    assert novelty.check(SEED, 0, np.random.default_rng(0)) is not None  # one still in flight
    novelty.end(key)
    assert novelty.check(SEED, 0, np.random.default_rng(0)) is None


BIG = variant(1, lines=20)
NEAR = BIG.replace("c5 = 1 * 5", "c5 = 1 * 6")  # one constant: another key, most shingles shared


def test_near_duplicates_are_rejected_with_the_given_probability(grid_archive, run_id, store):
    elite = store(BIG, ast_key=ast_key(BIG))
    similarity = jaccard(fingerprint(NEAR).shingles, fingerprint(BIG).shingles)
    assert NEAR != BIG and 0.9 < similarity < 1.0
    threshold = similarity - 0.01
    rng = np.random.default_rng(1)
    never = make_filter(grid_archive, run_id, similarity=threshold, rejection=0.0)
    always = make_filter(grid_archive, run_id, similarity=threshold, rejection=1.0)
    half = make_filter(grid_archive, run_id, similarity=threshold, rejection=0.5)
    assert all(never.check(NEAR, 0, rng) is None for _ in range(50))
    verdicts = [always.check(NEAR, 0, rng) for _ in range(50)]
    assert all(v == Verdict("near", elite.id, similarity, ast_key(NEAR)) for v in verdicts)
    rejected = sum(half.check(NEAR, 0, rng) is not None for _ in range(400))
    assert 150 < rejected < 250
    assert verdicts[0].artifacts()["similarity"] == f"{similarity:.3f}"
    strict = make_filter(grid_archive, run_id, similarity=similarity + 0.01, rejection=1.0)
    assert strict.check(NEAR, 0, rng) is None  # below the threshold: never a near-duplicate
    assert always.check(NEAR, 1, rng) is None  # island 1 holds no elite


def test_the_rng_is_drawn_only_for_a_near_duplicate(grid_archive, run_id, store):
    store(SEED, ast_key=ast_key(SEED))
    rng = np.random.default_rng(3)
    before = rng.bit_generator.state
    make_filter(grid_archive, run_id, rejection=1.0).check(variant(9, 4), 0, rng)
    assert rng.bit_generator.state == before


def test_nearest_finds_the_most_similar_of_many_elites(grid_archive, run_id, store):
    sources = [variant(i, lines=6) for i in range(3 * SHORTLIST)]
    for cell, source in enumerate(sources):
        store(source, cell=cell)
    novelty = make_filter(grid_archive, run_id)
    candidate = fingerprint(sources[13].replace("c2 = 13", "c2 = 14")).shingles
    exact = {
        e.program_id: jaccard(candidate, fingerprint(s).shingles)
        for e, s in zip(grid_archive.elites(run_id, 0), sources, strict=True)
    }
    best_id, best = novelty.nearest(candidate, 0)
    assert best == max(exact.values()) and exact[best_id] == best


def test_sketches_estimate_jaccard():
    a = fingerprint(variant(1, lines=30)).shingles
    b = fingerprint(variant(1, lines=30).replace("+ 1", "+ 2", 1)).shingles
    estimate = float((sketch(a) == sketch(b)).mean())
    assert estimate == pytest.approx(jaccard(a, b), abs=0.15)
    assert (sketch(a) == sketch(a)).all()


def test_settings_are_checked(grid_archive, run_id):
    with pytest.raises(ValueError, match="similarity must be in"):
        make_filter(grid_archive, run_id, similarity=0.0)
    with pytest.raises(ValueError, match="rejection must be a probability"):
        make_filter(grid_archive, run_id, rejection=1.5)
