"""Prompt context read from the archive, and prompts: sections, modes, size, templates."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from evoforge.archive import Archive, Program
from evoforge.evaluators import Status
from evoforge.evolve import ConfigError
from evoforge.evolve.edits import apply_edit
from evoforge.evolve.offline._mutator import mutate
from evoforge.evolve.offline._prompt import read_prompt
from evoforge.evolve.prompts import (
    SECOND_PARENT_HEADING,
    PromptConfig,
    PromptTemplateError,
    build_messages,
    load_templates,
)
from evoforge.evolve.prompts._context import (
    FailedAttempt,
    PromptContext,
    gather_context,
    short_diff,
)
from evoforge.evolve.prompts._memory import OptimizationMemory
from evoforge.evolve.prompts._modes import Mode
from evoforge.islands import Selection
from evoforge.problems import load_problem
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC
from tests.evolve.run_history import PROBLEM, SEED, History, variant

RNG = np.random.default_rng


@pytest.fixture
def archive(tmp_path: Path):
    with Archive(tmp_path / "a.db") as opened:
        yield opened


@pytest.fixture
def history(archive: Archive) -> History:
    return History(archive)


def select(parent: Program, *inspirations: Program) -> Selection:
    return Selection(island=parent.island, parent=parent, inspirations=tuple(inspirations))


def user_text(messages: list[dict[str, str]]) -> str:
    assert [m["role"] for m in messages] == ["system", "user"]
    return messages[1]["content"]


# --- gather_context ------------------------------------------------------------------------


def test_top_programs_are_the_runs_best_without_the_parent(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    scored = [
        history.add(variant(i), parent=seed, score=s, cell=i) for i, s in enumerate((5, 3, 4, 2))
    ]
    context = gather_context(
        history.archive, history.run_id, PROBLEM, select(scored[0]), Mode.DIFF,
        PromptConfig(top_programs=2), RNG(0),
    )  # fmt: skip
    assert [p.score for p in context.top_programs] == [4, 3]  # 5 is the parent
    assert context.mode is Mode.DIFF and context.parent == scored[0]


def test_lineage_failures_are_the_lineages_recent_failed_attempts(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    parent = history.add(variant(1), parent=seed, score=2.0)
    old = history.add(variant(2), parent=seed, status=Status.TIMEOUT, artifacts={"error": "slow"})
    history.add(variant(3), parent=parent, score=1.5)  # ok children are not failures
    bad_edit = history.add(
        None, parent=parent, status=Status.EDIT_ERROR, artifacts={"error": "block 1: not found"}
    )
    crash = history.add(
        variant(4).replace("A * x", "A / 0 * x"), parent=parent, status=Status.RUNTIME_ERROR,
        artifacts={"error": "ZeroDivisionError: float division by zero"},
    )  # fmt: skip
    stranger = history.add(variant(5), parent=seed, score=0.5, cell=2)
    history.add(variant(6), parent=stranger, status=Status.INCORRECT)  # another lineage
    config = PromptConfig(lineage_failures=3)
    context = gather_context(
        history.archive, history.run_id, PROBLEM, select(parent), Mode.DIFF, config, RNG(0)
    )
    assert [f.program.id for f in context.lineage_failures] == [crash.id, bad_edit.id, old.id]
    crash_diff = context.lineage_failures[0].diff
    assert "-    return A * x + B\n+    return A / 0 * x + B\n" in crash_diff
    assert context.lineage_failures[1].diff == ""  # an edit that never applied has no source
    few = gather_context(
        history.archive, history.run_id, PROBLEM, select(parent), Mode.DIFF,
        PromptConfig(lineage_failures=1), RNG(0),
    )  # fmt: skip
    assert [f.program.id for f in few.lineage_failures] == [crash.id]


def test_crossover_partner_prefers_an_inspiration_from_another_island(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    same = history.add(variant(1), parent=seed, score=2.0, cell=1)
    other = history.add(variant(2), parent=seed, score=2.5, cell=2, island=1)
    for n in range(5):
        context = gather_context(
            history.archive, history.run_id, PROBLEM, select(seed, same, other),
            Mode.CROSSOVER, PromptConfig(), RNG(n),
        )  # fmt: skip
        assert context.second_parent == other
        assert context.inspirations == (same,)  # the partner is not shown twice


def test_crossover_partner_without_inspirations_is_another_elite(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    alone = gather_context(
        history.archive, history.run_id, PROBLEM, select(seed), Mode.CROSSOVER, PromptConfig(),
        RNG(0),
    )  # fmt: skip
    assert alone.mode is Mode.DIFF and alone.second_parent is None  # nothing to cross with
    elite = history.add(variant(1), parent=seed, score=2.0, cell=3)
    context = gather_context(
        history.archive, history.run_id, PROBLEM, select(seed), Mode.CROSSOVER, PromptConfig(),
        RNG(0),
    )  # fmt: skip
    assert context.mode is Mode.CROSSOVER and context.second_parent == elite


def test_repair_context_shows_the_breaking_change_and_no_optimisation(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    history.add(variant(1), parent=seed, score=3.0, cell=1)
    broken = history.add(
        SEED.replace("A * x", "A * y"), parent=seed, status=Status.RUNTIME_ERROR,
        artifacts={"error": "NameError: name 'y' is not defined"},
    )  # fmt: skip
    sibling = history.add(variant(2), parent=seed, status=Status.TIMEOUT)
    with pytest.raises(ValueError, match="pass parent=pick_repair"):
        gather_context(
            history.archive, history.run_id, PROBLEM, select(seed), Mode.REPAIR, PromptConfig(),
            RNG(0),
        )  # fmt: skip
    memory = OptimizationMemory(refresh_every=1)
    context = gather_context(
        history.archive, history.run_id, PROBLEM, select(seed), Mode.REPAIR, PromptConfig(),
        RNG(0), parent=broken, memory=memory, evaluations=10,
    )  # fmt: skip
    assert context.parent == broken and context.mode is Mode.REPAIR
    assert [f.program.id for f in context.lineage_failures] == [sibling.id]
    assert "-    return A * x + B\n+    return A * y + B\n" in context.parent_diff
    assert context.top_programs == context.inspirations == () and context.memory_digest == ""


def test_memory_digest_is_included_when_a_memory_is_given(history: History) -> None:
    seed = history.add(SEED, score=1.0)
    history.add(variant(1), parent=seed, score=3.0, cell=1)
    context = gather_context(
        history.archive, history.run_id, PROBLEM, select(seed), Mode.DIFF, PromptConfig(),
        RNG(0), memory=OptimizationMemory(refresh_every=1), evaluations=2,
    )  # fmt: skip
    assert "Largest improvements" in context.memory_digest


def test_crossover_context_requires_a_second_parent() -> None:
    parent = Program("r", "id", 0, SEED, None, 0, 0, Status.OK)
    with pytest.raises(ValueError, match="second_parent"):
        PromptContext(Mode.CROSSOVER, parent)


# --- prompts per mode ----------------------------------------------------------------------


def program(source: str, seq: int, **fields) -> Program:
    fields.setdefault("status", Status.OK)
    fields.setdefault("score", 1.0 if fields["status"] is Status.OK else None)
    fields.setdefault("edit_kind", "diff")
    parent_id = fields.pop("parent_id", None)
    return Program("r", f"p{seq:015d}", seq, source, parent_id, 0, 1, **fields)


PARENT = program(SEED, 1, metrics={"score": 1.0, "a": 1.0}, artifacts={"profile": "f: 90%"})
SECOND = program(SEED.replace("A = 1.0", "A = 1.5"), 2, score=1.5)
INSPIRATION = program(SEED.replace("B = 2.0", "B = 2.5"), 3, score=1.2)
BEST = program(SEED.replace("A = 1.0", "A = 3.0"), 4, score=9.0)
FAILURE = FailedAttempt(
    program(
        SEED.replace("A * x", "A * z"), 5, status=Status.RUNTIME_ERROR, parent_id=PARENT.id,
        artifacts={"error": "NameError: name 'z' is not defined"},
    ),
    "@@ -9 +9 @@\n-    return A * x + B\n+    return A * z + B\n",
)  # fmt: skip
BROKEN = program(
    SEED.replace("A * x", "A * y"), 6, status=Status.RUNTIME_ERROR,
    artifacts={"error": "NameError: name 'y' is not defined", "traceback": "line 9, in f"},
)  # fmt: skip


def context_for(mode: Mode, **changes) -> PromptContext:
    """A full context as gather_context gives it (repair: no best programs, inspirations or
    memory)."""
    if mode is Mode.REPAIR:
        base = PromptContext(
            mode,
            BROKEN,
            lineage_failures=(FAILURE,),
            parent_diff="@@ -9 +9 @@\n-    return A * x + B\n+    return A * y + B\n",
        )
    else:
        base = PromptContext(
            mode,
            PARENT,
            second_parent=SECOND if mode is Mode.CROSSOVER else None,
            inspirations=(INSPIRATION,),
            top_programs=(BEST, SECOND),
            lineage_failures=(FAILURE,),
            memory_digest="After 50 evaluations: diff improved 3 times.",
        )
    return dataclasses.replace(base, **changes)


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


@pytest.mark.parametrize("mode", list(Mode), ids=str)
def test_prompt_sections_of_each_mode(mode: Mode) -> None:
    messages = build_messages(PROBLEM, context_for(mode))
    system, user = messages[0]["content"], user_text(messages)
    assert "EVOLVE-BLOCK-START" in system and '"line"' in system
    assert user.startswith(
        "# Problem: line\n\nFit a line.\n\nObjectives: score (maximize, primary)."
    )
    parent = BROKEN if mode is Mode.REPAIR else PARENT
    current = section(user, "## Current program")
    assert f"```python\n{parent.source.rstrip()}\n```" in current
    assert f"status: {parent.status}" in current
    for text in parent.artifacts.values():
        assert text in current
    task, answer = section(user, "## Task"), section(user, "## Answer format")
    has_diff, has_rewrite = "<<<<<<< SEARCH" in answer, "whole new program" in answer
    assert (has_diff, has_rewrite) == {
        Mode.DIFF: (True, False),
        Mode.REWRITE: (False, True),
        Mode.CROSSOVER: (True, True),
        Mode.REPAIR: (True, False),
    }[mode]
    if mode is Mode.REPAIR:
        assert "(it failed: runtime_error; fix it)" in current
        assert "+    return A * y + B" in current  # the change that broke it
        assert "Fix it" in task and "functional fix only" in task
        assert "## Best programs" not in user and "## Optimization memory" not in user
    else:
        assert "score (maximize)" in task
        assert "## Best programs of this run\n1. id p000000000000004" in user
        assert "After 50 evaluations" in section(user, "## Optimization memory")
        assert INSPIRATION.source.rstrip() in section(user, "## Inspiration 1")
    assert "NameError: name 'z' is not defined" in section(user, "## Recent failures")
    if mode is not Mode.REPAIR:
        assert "### seq 5: runtime_error (a diff of the current program)" in user
    if mode is Mode.CROSSOVER:
        assert SECOND.source.rstrip() in section(user, SECOND_PARENT_HEADING)
        assert "(shown above as the second parent)" in section(user, "## Best programs")
    assert "Left out" not in user
    order = [user.find(h) for h in ("## Current program", "## Task", "## Answer format")]
    assert order == sorted(order) and order[0] > 0


@pytest.mark.parametrize("mode", list(Mode), ids=str)
def test_offline_model_reads_and_answers_every_mode(mode: Mode) -> None:
    context = context_for(mode)
    program_read, inspirations = read_prompt(build_messages(PROBLEM, context))
    assert program_read == context.parent.source
    expected = [SECOND.source] if mode is Mode.CROSSOVER else []
    if mode is not Mode.REPAIR:
        expected.append(INSPIRATION.source)
    assert inspirations == expected
    for seed in range(5):
        answer = mutate(program_read, inspirations, RNG(seed))
        assert apply_edit(context.parent.source, answer).source != context.parent.source


@pytest.mark.parametrize("mode", [Mode.CROSSOVER, Mode.REWRITE], ids=str)
def test_programs_are_fenced_in_the_problems_language(mode: Mode) -> None:
    cpp = dataclasses.replace(PROBLEM, language="cpp")
    user = user_text(build_messages(cpp, context_for(mode)))
    assert f"```cpp\n{PARENT.source.rstrip()}\n```" in section(user, "## Current program")
    assert "```cpp\n" in section(user, "## Inspiration 1")
    assert "in one ```cpp fenced block" in section(user, "## Answer format")
    assert "```python" not in user


def test_backticks_in_sources_and_artifacts_do_not_break_the_fences() -> None:
    source = SEED.replace("A = 1.0", 'A = 1.0\nDOC = """\n```\nnot the end\n```\n"""')
    parent = program(source, 1, artifacts={"stderr_tail": "````\n``` printed\n"})
    context = PromptContext(Mode.DIFF, parent, inspirations=(INSPIRATION,))
    program_read, inspirations = read_prompt(build_messages(PROBLEM, context))
    assert program_read == source and inspirations == [INSPIRATION.source]


# --- size ----------------------------------------------------------------------------------


def state_of(user: str) -> tuple[bool, int, int, int]:
    """(memory shown, best programs with code, failures shown, inspirations shown)."""
    best = section(user, "## Best programs") if "## Best programs" in user else ""
    return (
        "## Optimization memory" in user,
        best.count("```python"),
        user.count("\n### seq "),
        len(re.findall(r"^## Inspiration \d", user, flags=re.M)),
    )


def big_context(parent_artifact_chars: int = 1_000_000) -> PromptContext:
    blob = "x = 1  # padding\n" * 150  # 2.5 kB: short enough to show as a best program
    padded = [
        program(SEED.replace("B = 2.0", f"B = 2.{i}\n{blob}"), 10 + i, score=float(i))
        for i in range(8)
    ]
    failures = tuple(
        FailedAttempt(
            program(variant(i), 30 + i, status=Status.INCORRECT, artifacts={"error": "e" * 4000}),
            "@@ -1 +1 @@\n" + "+x\n" * 600,
        )
        for i in range(3)
    )
    return PromptContext(
        Mode.DIFF,
        program(SEED, 1, artifacts={"stderr_tail": "s" * parent_artifact_chars, "error": "E!"}),
        inspirations=tuple(padded[:5]),
        top_programs=tuple(padded[5:]),
        lineage_failures=failures,
        memory_digest="memory line\n" * 150,
    )


def test_huge_inputs_stay_within_max_chars_with_parent_task_and_format_whole() -> None:
    config = PromptConfig(max_chars=12_000)
    messages = build_messages(PROBLEM, big_context(), config)
    user = user_text(messages)
    assert sum(len(m["content"]) for m in messages) <= 12_000
    assert f"```python\n{SEED.rstrip()}\n```" in section(user, "## Current program")
    assert section(user, "## Answer format") in user_text(
        build_messages(PROBLEM, context_for(Mode.DIFF))
    )
    note = re.search(
        r"\(Left out to keep this prompt within 12000 characters, set by \[prompts\] "
        r"max_chars: (.*)\.\)",
        user,
    )
    assert note is not None
    assert "the optimization memory" in note.group(1)
    assert "the code of 3 best program(s)" in note.group(1)
    assert state_of(user)[:3] == (False, 0, 0)


def test_things_are_left_out_in_the_fixed_priority_order() -> None:
    context = big_context(parent_artifact_chars=3000)
    full = user_text(build_messages(PROBLEM, context, PromptConfig(max_chars=1_000_000)))
    assert state_of(full) == (True, 3, 3, 5)
    seen = []
    for limit in range(len(full) + 500, 4000, -1500):
        user = user_text(build_messages(PROBLEM, context, PromptConfig(max_chars=limit)))
        memory, sources, failures, inspirations = state_of(user)
        seen.append(state_of(user))
        if not memory or sources < 3 or failures < 3 or inspirations < 5:
            assert "Left out" in user
        assert memory <= (sources == 3) and memory <= (failures == 3)  # memory goes first
        assert sources == 3 or not memory
        assert failures == 3 or sources == 0
        assert inspirations == 5 or failures == 0
        if "evaluation feedback" in user.split("Left out", 1)[-1]:
            assert inspirations == 0
    assert seen == sorted(seen, reverse=True)  # monotone: less room, never more shown
    assert seen[0] == (True, 3, 3, 5) and seen[-1] == (False, 0, 0, 0)


def test_parent_longer_than_the_limit_is_never_cut() -> None:
    huge = SEED.replace("B = 2.0", "B = 2.0\n" + "C = 0\n" * 5000)
    context = dataclasses.replace(
        big_context(5000), parent=program(huge, 1, artifacts={"e": "x" * 900})
    )
    user = user_text(build_messages(PROBLEM, context, PromptConfig(max_chars=4000)))
    assert huge.rstrip() in user
    assert state_of(user) == (False, 0, 0, 0)
    assert "the evaluation feedback" in user and "## Task" in user and "<<<<<<< SEARCH" in user


# --- templates -----------------------------------------------------------------------------


@pytest.fixture
def problem_dir(make_problem) -> Path:
    return make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)


def prompts_of(folder: Path, mode: Mode = Mode.DIFF, config: PromptConfig | None = None):
    problem = load_problem(folder)
    parent = program(problem.seed_source, 1)
    return build_messages(problem, PromptContext(mode, parent), config)


def test_problem_folder_templates_override_the_built_ins(problem_dir: Path) -> None:
    (problem_dir / "prompts").mkdir()
    (problem_dir / "prompts" / "task_diff.md").write_text(
        "Nudge $primary of $problem_name ($direction); it costs $$0.\n"
    )
    (problem_dir / "prompts" / "system.md").write_text("You tune numbers.\n")
    messages = prompts_of(problem_dir)
    assert messages[0]["content"] == "You tune numbers."
    assert "## Task\nNudge score of tiny (maximize); it costs $0.\n" in user_text(messages)
    rewrite = user_text(prompts_of(problem_dir, Mode.REWRITE))
    assert "Rewrite the code between the EVOLVE-BLOCK markers" in rewrite  # not overridden


def test_options_then_config_templates_win_over_files(make_problem) -> None:
    spec = TRIVIAL_SPEC + '\n    options = {"prompts": {"task_diff": "From options: $mode."}}\n'
    folder = make_problem(spec, TRIVIAL_SEED)
    (folder / "prompts").mkdir()
    (folder / "prompts" / "task_diff.md").write_text("From the file.")
    assert "## Task\nFrom options: diff.\n" in user_text(prompts_of(folder))
    config = PromptConfig(templates={"task_diff": "From the run config."})
    assert "## Task\nFrom the run config.\n" in user_text(prompts_of(folder, config=config))


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("task_diff.md", "Improve $objective now.", r"unknown placeholder\(s\) \$objective"),
        ("answer_rewrite.md", "Costs $5.", r"write \$\$ for a literal dollar"),
        ("task_difff.md", "Improve.", r"no template is called 'task_difff'"),
    ],
    ids=["unknown-placeholder", "bad-dollar", "unknown-name"],
)
def test_a_bad_template_file_is_an_error_naming_it(
    problem_dir: Path, name: str, text: str, message: str
) -> None:
    (problem_dir / "prompts").mkdir()
    (problem_dir / "prompts" / name).write_text(text)
    with pytest.raises(PromptTemplateError, match=message) as error:
        load_templates(load_problem(problem_dir))
    assert str(problem_dir / "prompts" / name) in str(error.value)


def test_bad_template_settings_are_errors(make_problem) -> None:
    spec = TRIVIAL_SPEC + '\n    options = {"prompts": ["task_diff"]}\n'
    with pytest.raises(PromptTemplateError, match=r"options\['prompts'\] must map"):
        load_templates(load_problem(make_problem(spec, TRIVIAL_SEED)))
    with pytest.raises(ConfigError, match=r"prompts.templates: task_dif: no template is called"):
        PromptConfig(templates={"task_dif": "x"})
    with pytest.raises(ConfigError, match=r"system: unknown placeholder.*\$nope"):
        PromptConfig(templates={"system": "$nope"})


@pytest.mark.parametrize(
    "field", ["max_chars", "top_programs", "lineage_failures", "artifact_chars"]
)
def test_prompt_config_rejects_bad_numbers(field: str) -> None:
    with pytest.raises(ConfigError, match=f"prompts.{field} = -1: must be at least"):
        PromptConfig(**{field: -1})
    with pytest.raises(ConfigError, match=f"prompts.{field} = 2.5: expected a whole number"):
        PromptConfig(**{field: 2.5})
    with pytest.raises(ConfigError, match="prompts.max_chars = 100"):
        PromptConfig(max_chars=100)


# --- diffs of failures ---------------------------------------------------------------------


def patch(before: list[str], diff: str) -> list[str]:
    """Apply a unified diff's hunks to ``before``; every context and removed line must match."""
    out, pos, lines = [], 0, diff.splitlines(keepends=True)
    for line in lines:
        if line.startswith("@@"):
            old = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
            start = int(old.group(1)) - (1 if old.group(2) != "0" else 0)
            out += before[pos:start]
            pos = start
        elif line[0] in " -":
            assert before[pos] == line[1:], f"line {pos + 1}: {before[pos]!r} != {line[1:]!r}"
            out += [line[1:]] if line[0] == " " else []
            pos += 1
        else:
            out.append(line[1:])
    return out + before[pos:]


def test_failure_diffs_are_valid_unified_diffs_of_the_change() -> None:
    rng = np.random.default_rng(5)
    seed = load_problem(Path(__file__).parents[2] / "problems/builtin/circle_packing").seed_source
    lines = seed.splitlines(keepends=True)
    for _ in range(300):
        child = list(lines)
        for _ in range(int(rng.integers(1, 5))):
            at = int(rng.integers(len(child)))
            kind = rng.integers(3)
            if kind == 0:
                del child[at]
            elif kind == 1:
                child.insert(at, f"x = {rng.random()}\n")
            else:
                child[at] = "changed\n"
        diff = short_diff(seed, "".join(child), max_chars=10**9)
        assert patch(lines, diff) == child
        assert not diff.startswith(("---", "+++"))
    assert short_diff(seed, seed) == ""
    cut = short_diff(seed, seed.replace("\n", "\n#\n"), max_chars=300)
    assert len(cut) <= 300 and cut.endswith("… (diff cut)\n")
