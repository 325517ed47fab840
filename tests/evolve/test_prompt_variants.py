"""Prompt co-evolution: the bandit over variants, its replay from the archive, new variants
from the bank and from a model's rewrite, and overrides reaching the prompt."""

from __future__ import annotations

import asyncio
import dataclasses
import string
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from evoforge.archive import Archive, Program, PromptVariant, Status
from evoforge.evolve.prompts import (
    FRAGMENTS,
    PLACEHOLDERS,
    VARIED,
    Mode,
    PromptContext,
    PromptEvolution,
    PromptTemplateError,
    RewriteError,
    build_messages,
    load_templates,
)
from evoforge.evolve.prompts._templates import check_templates
from tests.evolve.run_history import PROBLEM, SEED, History, variant


@pytest.fixture
def archive(tmp_path: Path):
    with Archive(tmp_path / "a.db") as opened:
        yield opened


@pytest.fixture
def history(archive: Archive) -> History:
    return History(archive)


def started(history: History, every: int = 40) -> PromptEvolution:
    evolution = PromptEvolution(every)
    evolution.start(history.archive, history.run_id, PROBLEM)
    return evolution


def add_variant(history: History, evolution: PromptEvolution, n: int) -> PromptVariant:
    """Store a bank variant and have the evolution know it (as maybe_evolve does)."""
    made = evolution.offline_variant(np.random.default_rng(n), seq=n)
    assert evolution.adopt(history.archive, made)
    assert not evolution.adopt(history.archive, made)
    return made


# --- start and the default variant ----------------------------------------------------------


def test_start_stores_the_problems_templates_as_the_default_variant_once(history: History):
    first = started(history)
    (default,) = first.variants
    assert default.origin == "default" and default.parent_id is None and default.seq == 0
    templates = load_templates(PROBLEM)
    assert default.templates == {name: templates[name] for name in VARIED}
    again = started(history)
    assert again.variants == [default]
    assert history.archive.prompt_variants(history.run_id) == [default]


def test_using_it_before_start_says_so():
    with pytest.raises(RuntimeError, match=r"start\(\) must be called"):
        PromptEvolution().choose(np.random.default_rng(0))


def test_recording_a_child_of_an_unknown_variant_is_an_error(history: History):
    with pytest.raises(KeyError, match="not a variant of run"):
        started(history).record("feedfacefeedface", improved=True, evaluated=True)


# --- the bandit -----------------------------------------------------------------------------


def test_the_bandit_prefers_the_variant_whose_children_improve_more(history: History):
    evolution = started(history)
    (weak,) = evolution.variants
    strong = add_variant(history, evolution, 1)
    for i in range(60):
        evolution.record(weak.id, improved=i % 10 == 0, evaluated=True)  # 10%
        evolution.record(strong.id, improved=i % 2 == 0, evaluated=True)  # 50%
    rng = np.random.default_rng(7)
    picks = [evolution.choose(rng).id for _ in range(400)]
    assert picks.count(strong.id) > 0.95 * len(picks)
    assert evolution.best() == strong


def test_a_new_variant_is_tried_and_choices_are_reproducible(history: History):
    evolution = started(history)
    (old,) = evolution.variants
    for i in range(200):
        evolution.record(old.id, improved=i % 5 == 0, evaluated=True)  # 20%, well known
    new = add_variant(history, evolution, 2)  # no evidence: Beta(1, 1)
    picks = [evolution.choose(np.random.default_rng([3, seq])).id for seq in range(300)]
    again = [evolution.choose(np.random.default_rng([3, seq])).id for seq in range(300)]
    assert picks == again
    assert 0.3 * len(picks) < picks.count(new.id) < 0.95 * len(picks)


def test_children_that_were_not_evaluated_do_not_count(history: History):
    evolution = started(history)
    (default,) = evolution.variants
    evolution.record(default.id, improved=True, evaluated=False)
    assert evolution.counts(default.id) == (0, 0)


def test_best_needs_evidence(history: History):
    evolution = started(history)
    (default,) = evolution.variants
    lucky = add_variant(history, evolution, 3)
    evolution.record(lucky.id, improved=True, evaluated=True)  # 1 of 1, but one child only
    for i in range(20):
        evolution.record(default.id, improved=i % 4 == 0, evaluated=True)
    assert evolution.best() == default


def commit(history, evolution, parent, variant_id, score, status=Status.OK, n=[0]):  # noqa: B006
    n[0] += 1
    child = history.add(
        variant(n[0]) if status is not Status.EDIT_ERROR else None,
        parent=parent, status=status, score=score, prompt_variant=variant_id,
    )  # fmt: skip
    evolution.record_child(child, parent.score)
    return child


def test_a_resumed_run_replays_exactly_the_live_counts(history: History):
    live = started(history)
    (default,) = live.variants
    other = add_variant(history, live, 4)
    seed = history.add(SEED, score=1.0)
    rng = np.random.default_rng(11)
    parents = [seed]
    for _ in range(60):
        chosen = live.choose(rng)
        status = [Status.OK, Status.OK, Status.INCORRECT, Status.EDIT_ERROR][rng.integers(4)]
        parent = parents[rng.integers(len(parents))]
        child = commit(history, live, parent, chosen.id, float(rng.normal(1, 1)), status)
        if child.status is Status.OK:
            parents.append(child)
    resumed = started(history)
    assert resumed.variants == live.variants
    for v in (default, other):
        assert resumed.counts(v.id) == live.counts(v.id)
    assert sum(sum(live.counts(v.id)) for v in (default, other)) > 0
    draws = np.random.default_rng(5)
    same = np.random.default_rng(5)
    assert [live.choose(draws) for _ in range(50)] == [resumed.choose(same) for _ in range(50)]


def test_record_child_ignores_children_without_a_variant(history: History):
    evolution = started(history)
    (default,) = evolution.variants
    seed = history.add(SEED, score=1.0)
    commit(history, evolution, seed, None, 5.0)
    assert evolution.counts(default.id) == (0, 0) and not evolution.successes


# --- when a variant is due ------------------------------------------------------------------


def test_a_variant_is_due_every_so_many_evaluations_and_resume_does_not_retrigger(
    history: History,
):
    evolution = started(history, every=10)
    assert not evolution.due(9) and evolution.due(10)
    rng = np.random.default_rng(0)
    made = asyncio.run(evolution.maybe_evolve(history.archive, evaluations=10, seq=12, rng=rng))
    assert made is not None and made.origin in ("bank", "recombination") and made.seq == 12
    assert (
        asyncio.run(evolution.maybe_evolve(history.archive, evaluations=11, seq=13, rng=rng))
        is None
    )
    assert not evolution.due(19) and evolution.due(20)
    resumed = started(history, every=10)  # two variants stored: the next is due at 20
    assert not resumed.due(19) and resumed.due(20)
    assert history.archive.prompt_variants(history.run_id)[-1] == made


# --- bank variants --------------------------------------------------------------------------


def test_bank_fragments_are_distinct_and_safe_in_a_template():
    assert len(FRAGMENTS) >= 12 and len(set(FRAGMENTS)) == len(FRAGMENTS)
    assert all("$" not in f and "\n" not in f for f in FRAGMENTS)


@settings(max_examples=60, deadline=None)
@given(seeds=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=8))
def test_bank_variants_are_new_valid_templates(tmp_path_factory, seeds):
    with Archive(tmp_path_factory.mktemp("bank") / "a.db") as archive:
        history = History(archive)
        evolution = started(history)
        for i, seed in enumerate(seeds, start=1):
            for v in evolution.variants:  # give each variant evidence: recombination too
                for k in range(6):
                    evolution.record(v.id, improved=(k + i) % 3 == 0, evaluated=True)
            made = asyncio.run(
                evolution.maybe_evolve(
                    archive, evaluations=40 * i, seq=i, rng=np.random.default_rng(seed)
                )
            )
            if made is None:  # every draw already stored: rare, and nothing is added
                continue
            assert set(made.templates) == set(VARIED)
            check_templates(made.templates, str)  # raises on a broken template
            for text in made.templates.values():
                assert set(string.Template(text).get_identifiers()) <= PLACEHOLDERS
            assert made.parent_id in {v.id for v in evolution.variants}
        ids = [v.id for v in archive.prompt_variants(history.run_id)]
        assert len(ids) == len(set(ids))


def test_a_bank_variant_adds_a_focus_to_the_improving_tasks_only(history: History):
    evolution = started(history)
    (default,) = evolution.variants
    made = evolution.offline_variant(np.random.default_rng(1), seq=3)
    assert made.origin == "bank" and made.parent_id == default.id
    fragment = made.note.removeprefix("focus: ")
    for name in ("task_diff", "task_rewrite", "task_crossover"):
        assert made.templates[name].endswith(f"Focus: {fragment}")
        assert made.templates[name].startswith(default.templates[name])
    assert made.templates["task_repair"] == default.templates["task_repair"]
    assert made.templates["system"] == default.templates["system"]


# --- model rewrites -------------------------------------------------------------------------

GOOD = """I made the strategy explicit.

```system
You evolve programs for $problem_name. Think about the structure first.
```

```task
Propose one change that raises $primary ($direction); prefer a new idea to a tweak.
```
"""


def test_a_rewrite_becomes_a_model_variant(history: History):
    evolution = started(history)
    (best,) = evolution.variants
    made = evolution.parse_rewrite(GOOD, best, seq=9)
    assert made.origin == "model" and made.parent_id == best.id and made.seq == 9
    assert made.templates["system"].startswith("You evolve programs for $problem_name.")
    assert made.templates["task_diff"].startswith("Propose one change")
    assert made.templates["task_rewrite"] == best.templates["task_rewrite"]
    assert made.note == "I made the strategy explicit."


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("Here is my idea: be bolder.", "no fenced block tagged 'system' or 'task'"),
        ("```system\nBe bold.\n```\n", "no fenced block tagged 'task'"),
        ("```system\nA\n```\n```task\nB\n```\n```system\nC\n```", "two fenced blocks tagged"),
        ("```system\nA\n```\n```python\nB\n```", "tagged 'python'; expected exactly two"),
        ("```system\n\n```\n```task\nB\n```", "the 'system' block is empty"),
        ("```system\nA\n```\n```task\n" + "x" * 5000 + "\n```", "5000 characters; at most"),
        ("```system\nCosts $5.\n```\n```task\nB\n```", "write \\$\\$ for a literal dollar"),
        ("```system\nA\n```\n```task\nImprove $metric.\n```", r"placeholder\(s\) \$metric"),
        ("```system\nA\n```\n```task\nB", "no fenced block tagged 'task'"),
    ],
    ids=[
        "no-fences", "missing-task", "duplicate", "unknown-tag", "empty", "too-long",
        "bare-dollar", "unknown-placeholder", "unclosed-fence",
    ],
)  # fmt: skip
def test_a_malformed_rewrite_is_rejected_with_a_clear_error(history: History, answer, message):
    evolution = started(history)
    (best,) = evolution.variants
    with pytest.raises(RewriteError, match=message):
        evolution.parse_rewrite(answer, best, seq=1)


def test_a_rewrite_that_changes_nothing_is_rejected(history: History):
    evolution = started(history)
    (best,) = evolution.variants
    same = (
        f"```system\n{best.templates['system']}\n```\n```task\n{best.templates['task_diff']}\n```"
    )
    with pytest.raises(RewriteError, match="identical"):
        evolution.parse_rewrite(same, best, seq=1)


def test_rewrite_messages_show_the_best_and_the_recent_outcomes(history: History):
    evolution = started(history)
    (best,) = evolution.variants
    seed = history.add(SEED, score=1.0)
    commit(history, evolution, seed, best.id, 2.5)
    commit(history, evolution, seed, best.id, None, Status.EDIT_ERROR)
    system, user = evolution.rewrite_messages(
        best, list(evolution.successes), list(evolution.failures)
    )
    assert system["role"] == "system" and user["role"] == "user"
    text = user["content"]
    assert best.templates["system"] in text and best.templates["task_diff"] in text
    assert "score 1 -> 2.5" in text and "edit_error" in text
    assert "1 of 1 evaluated children improved" in text
    assert "```system" in text and "```task" in text


@pytest.mark.parametrize("thinking", ["", "<think>\nA draft:\n```\nnot this\n```\n</think>\n"])
def test_maybe_evolve_uses_the_models_rewrite(history: History, thinking: str):
    evolution = started(history, every=5)
    asked = []

    async def ask(messages):
        asked.append(messages)
        return thinking + GOOD

    made = asyncio.run(
        evolution.maybe_evolve(
            history.archive, evaluations=5, seq=6, rng=np.random.default_rng(0), ask=ask
        )
    )
    assert len(asked) == 1 and made is not None and made.origin == "model"
    assert made.note == "I made the strategy explicit."  # the thinking is not the note
    assert history.archive.prompt_variants(history.run_id)[-1] == made
    assert made in evolution.variants


@pytest.mark.parametrize("fault", ["malformed", "raises"])
def test_maybe_evolve_falls_back_to_the_bank(history: History, fault, caplog):
    evolution = started(history, every=5)

    async def ask(messages):
        if fault == "raises":
            raise ConnectionError("the model is down")
        return "I would rather not."

    made = asyncio.run(
        evolution.maybe_evolve(
            history.archive, evaluations=7, seq=8, rng=np.random.default_rng(0), ask=ask
        )
    )
    assert made is not None and made.origin in ("bank", "recombination")
    assert "using the built-in bank instead" in caplog.text


# --- overrides reach the prompt -------------------------------------------------------------


def parent() -> Program:
    from evoforge.archive import program_id

    return Program(
        run_id="r", id=program_id(SEED), seq=0, source=SEED, parent_id=None, island=0,
        generation=0, status=Status.OK, score=1.0,
    )  # fmt: skip


def test_a_variants_templates_reach_the_messages(history: History):
    evolution = started(history)
    made = evolution.parse_rewrite(GOOD, evolution.variants[0], seq=1)
    context = PromptContext(Mode.DIFF, parent())
    plain = build_messages(PROBLEM, context)
    varied = build_messages(PROBLEM, context, overrides=made.templates)
    assert varied[0]["content"] == (
        "You evolve programs for line. Think about the structure first."
    )
    assert "Propose one change that raises score (maximize)" in varied[1]["content"]
    assert "Propose one change" not in plain[1]["content"]
    # The default variant changes nothing.
    default = build_messages(PROBLEM, context, overrides=evolution.variants[0].templates)
    assert default == plain


def test_a_broken_override_is_refused(history: History):
    context = PromptContext(Mode.DIFF, parent())
    with pytest.raises(PromptTemplateError, match="prompt variant template 'task_diff'"):
        build_messages(PROBLEM, context, overrides={"task_diff": "Improve $nothing."})


def test_a_variant_with_unchanged_seq_keeps_its_identity(history: History):
    evolution = started(history)
    (default,) = evolution.variants
    moved = dataclasses.replace(default, seq=5)
    assert not history.archive.add_prompt_variant(moved)  # same templates: same variant
