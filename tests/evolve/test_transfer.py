"""Cross-task transfer: related tasks, the labelled offer in the prompt, what children record."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from evoforge.archive import Archive, Program, Status, program_id
from evoforge.evolve.models import ModelSpec
from evoforge.evolve.prompts import (
    FOREIGN_HEADING,
    Foreign,
    Mode,
    PromptConfig,
    PromptContext,
    build_messages,
)
from evoforge.evolve.run._transfer import related_tasks, transfer_source
from evoforge.evolve.search import request_key
from evoforge.problems import load_problem
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC


def _program(run_id: str, seq: int, score: float, text: str = "") -> Program:
    source = (
        f"# EVOLVE-BLOCK-START\ndef main():\n    return [{seq}, 2.0]{text}\n# EVOLVE-BLOCK-END\n"
    )
    return Program(
        run_id=run_id, id=program_id(source), seq=seq, source=source, parent_id=None,
        island=0, generation=0, status=Status.OK, score=score, cell=0,
    )  # fmt: skip


def test_tasks_of_one_family_or_with_alike_seeds_are_related(make_problem):
    def spec(name: str, family: str) -> str:
        named = TRIVIAL_SPEC.replace('name = "tiny"', f'name = "{name}"')
        return named + f"    family = '{family}'\n"

    same = [
        load_problem(make_problem(spec(n, f), seed, name=n))
        for n, f, seed in (
            ("a", "packing", TRIVIAL_SEED),
            ("b", "packing", "# EVOLVE-BLOCK-START\ndef main():\n    return 'zzz'\n"
                             "# EVOLVE-BLOCK-END\n"),
            ("c", "", TRIVIAL_SEED),  # no family, the same seed as a
            ("d", "", "# EVOLVE-BLOCK-START\nimport os\nq = os.sep * 9\n# EVOLVE-BLOCK-END\n"),
        )
    ]  # fmt: skip
    related = related_tasks(same, similarity=0.5)
    assert related[0] == [2, 1]  # the identical seed first, then the family
    assert related[1] == [0] and related[2] == [0] and related[3] == []


def test_the_offer_is_labelled_as_another_tasks_and_goes_first_when_space_is_short(tmp_path):
    problem = load_problem(_folder(tmp_path))
    pad = " " + "x" * 900  # programs long enough for the smallest prompt limit to cut one
    parent, own = _program("r", 1, 1.0), _program("r", 2, 2.0, "  # own" + pad)
    far = _program("other-run", 7, 9.0, "  # far" + pad)
    foreign = Foreign("circle_packing_32", "other-run", far)
    context = PromptContext(Mode.DIFF, parent, inspirations=(own,), foreign=(foreign,))
    text = build_messages(problem, context)[1]["content"]
    assert f"{FOREIGN_HEADING} (circle_packing_32)" in text
    assert "not of this problem" in text and "# far" in text and "# own" in text
    assert text.index("# own") < text.index("# far")
    small = build_messages(problem, context, PromptConfig(max_chars=len(text) - 50))[1]["content"]
    assert "# own" in small and "# far" not in small  # the other task's program went first
    spec = ModelSpec("offline/mutator")
    keys = {
        request_key(c, spec, {}, temperature=0.7, max_tokens=10, seed=1)
        for c in (context, dataclasses.replace(context, foreign=()))
    }
    assert len(keys) == 2  # an offer makes another request


def test_a_task_is_offered_the_best_of_a_related_task_that_improved_on_its_seed(
    make_problem, tmp_path
):
    problem = load_problem(make_problem(TRIVIAL_SPEC, TRIVIAL_SEED))
    with Archive(tmp_path / "t.db") as archive:
        runs = {}
        for name in ("stuck", "better"):
            run = archive.create_run(problem, config={}, seed=0, run_id=f"{name}-run")
            runs[name] = run.id
            archive.add_program(_program(run.id, 0, 1.0))
            archive.update_run(run.id, best_score=1.0, best_program_id=_program(run.id, 0, 1.0).id)
        best = _program(runs["better"], 1, 3.0)
        archive.add_program(best)
        archive.update_run(runs["better"], best_score=3.0, best_program_id=best.id)
        names = {0: ("stuck_task", runs["stuck"]), 1: ("better_task", runs["better"])}
        offer = transfer_source(archive, [0, 1], names.__getitem__, rate=1.0)
        assert offer is not None
        got = offer(np.random.default_rng(0))
        assert (got.task, got.run_id, got.program.id) == ("better_task", "better-run", best.id)
        assert got.ref == f"better-run/{best.id}"
        never = transfer_source(archive, [0], names.__getitem__, rate=1.0)
        assert never is not None and never(np.random.default_rng(0)) is None  # only its seed
        assert transfer_source(archive, [], names.__getitem__, rate=1.0) is None
        assert transfer_source(archive, [1], names.__getitem__, rate=0.0) is None


def _folder(tmp_path: Path) -> Path:
    import textwrap

    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "problem.py").write_text(textwrap.dedent(TRIVIAL_SPEC))
    (folder / "seed.py").write_text(textwrap.dedent(TRIVIAL_SEED))
    return folder


@pytest.mark.slow
def test_children_of_a_suite_with_transfer_record_the_offer_and_stats_count_them(
    make_problem, tmp_path
):
    import asyncio

    from evoforge.evolve.config import SuiteConfig
    from evoforge.evolve.mining import run_stats
    from evoforge.evolve.run import resolve, start_suite

    folder = tmp_path / "suite"
    folder.mkdir()
    for name in ("ta", "tb"):
        spec = TRIVIAL_SPEC.replace('name = "tiny"', f'name = "{name}"') + "    family = 't'\n"
        make_problem(spec, TRIVIAL_SEED, name=f"suite/{name}")
    db = tmp_path / "s.db"
    report = asyncio.run(
        start_suite(
            "suite",
            resolve(str(folder)).problems,
            lambda p: {"problem": str(p.spec_path.parent), "workers": 1, "seed": 1},
            db,
            budget=40,
            config=SuiteConfig(allocation="equal", transfer=True, transfer_rate=1.0),
        )
    )
    assert report.status == "finished"
    with Archive(db) as archive:
        offered = 0
        for run in archive.runs():
            for program in archive.programs(run.id):
                if program.transfer_from is None:
                    continue
                offered += 1
                other_run, other_id = program.transfer_from.split("/")
                assert other_run != run.id and archive.has_program(other_run, other_id)
            stats = run_stats(archive, run)
            if stats["transfer"] is not None:
                assert stats["transfer"]["with"]["children"] > 0
        assert offered > 0
