"""A real archive with prompt variants and their children, for the CLI and dashboard tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from evoforge.archive import Archive, Status
from evoforge.evolve.prompts import PromptEvolution
from tests.evolve.run_history import PROBLEM, SEED, History, variant


def build_prompt_archive(path: Path) -> Path:
    """Run ``evolving`` with two variants: the default (3 children: one better, one worse, one
    edit error) and a bank one derived from it (2 children, both better); and run ``plain``
    without variants."""
    with Archive(path) as archive:
        History(archive, run_id="plain").add(SEED, score=1.0)
        history = History(archive, run_id="evolving")
        evolution = PromptEvolution(every=3)
        evolution.start(archive, history.run_id, PROBLEM)
        (default,) = evolution.variants
        bank = evolution.offline_variant(np.random.default_rng(0), seq=3)
        assert evolution.adopt(archive, bank)
        seed = history.add(SEED, score=1.0, objectives={"score": 1.0})
        for n, (v, score, status) in enumerate(
            [
                (default, 2.0, Status.OK),
                (default, 0.5, Status.OK),
                (default, None, Status.EDIT_ERROR),
                (bank, 3.0, Status.OK),
                (bank, 4.0, Status.OK),
            ],
            start=1,
        ):
            history.add(
                variant(n) if status is Status.OK else None,
                parent=seed, score=score, status=status, prompt_variant=v.id,
                objectives={} if score is None else {"score": score},
            )  # fmt: skip
    return path
