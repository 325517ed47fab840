"""What sloppy writing costs once edits are applied: edit errors, syntax errors, wrong children.

Protocol. For real programs (``circle_packing``'s seed, ``bench/openevolve_example``'s
``initial_program.py`` and every ``problems/builtin/*/seed*.py`` with a Python EVOLVE-BLOCK),
the offline mutator (:func:`evoforge.evolve.offline.mutate`) proposes ``--answers`` edits in
all, spread over the programs; each program walks: an edit whose child parses becomes the next
parent, so later edits meet code that earlier edits changed, and the walk's last three parents
are the inspirations (crossovers copy code from them, as in a run). Each edit is written twice
by the sloppy model server's own functions (``tests/evolve/sloppy_server.py``): cleanly
(:func:`~tests.evolve.sloppy_server.render` of its :func:`~tests.evolve.sloppy_server.diff_hunks`)
and sloppily, with one or two of its :data:`~tests.evolve.sloppy_server.KINDS` drawn as the
server draws them for a sloppy answer. Both answers go through
:func:`evoforge.evolve.edits.apply_edit` with the default (tolerant) matching and the engine's
syntax check, exactly as a proposal worker applies them (including its retry of an edit whose
child does not parse, when the installed :mod:`evoforge.evolve.edits` has one).

Output (stdout): per writing, the share of answers ending ``edit_error``, ``syntax_error`` and
``ok``, the wasted share (the first two), and the share of ``ok`` children that differ from
the child the edit means (``ok_wrong``: applied, parsed, but not what the author wrote); then
the same per sloppiness kind. Deterministic for a given ``--seed``; a few seconds on one core::

    python bench/sloppy_edits.py                  # 300 answers
    python bench/sloppy_edits.py --answers 1000 --seed 2 --json /tmp/sloppy.json

Asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.evolve.sloppy_server

from evoforge.evolve.checks._syntax import check_program_syntax  # noqa: E402
from evoforge.evolve.edits import EditError, apply_edit  # noqa: E402
from evoforge.evolve.offline import mutate  # noqa: E402
from evoforge.problems import START_MARKER  # noqa: E402
from tests.evolve.sloppy_server import (  # noqa: E402
    CORRECT,
    KINDS,
    choose_kinds,
    diff_hunks,
    render,
    write_sloppily,
)

OUTCOMES = ("edit_error", "syntax_error", "ok")
RETRY = True  # --no-retry: apply without the check (no second mapping tried)


def programs() -> dict[str, str]:
    """The real programs measured, by a short name."""
    paths = [
        ROOT / "problems" / "builtin" / "circle_packing" / "seed.py",
        ROOT / "bench" / "openevolve_example" / "initial_program.py",
        *sorted((ROOT / "problems" / "builtin").glob("*/seed*.py")),
    ]
    out: dict[str, str] = {}
    for path in paths:
        text = path.read_text()
        name = path.parent.name if path.name.startswith("seed") else path.parent.name + "/initial"
        if START_MARKER in text and check_program_syntax(text, "python") is None:
            out.setdefault(name, text)
    return out


def outcome(parent: str, answer: str) -> tuple[str, str | None]:
    """How ``answer`` ends when a proposal worker applies it to ``parent``, and the child."""
    retries = "check" in inspect.signature(apply_edit).parameters
    try:
        if retries and RETRY:
            edit = apply_edit(
                parent, answer, check=functools.partial(check_program_syntax, language="python")
            )
        else:
            edit = apply_edit(parent, answer)
    except EditError:
        return "edit_error", None
    if check_program_syntax(edit.source, "python") is not None:
        return "syntax_error", edit.source
    return "ok", edit.source


def sloppy_kinds(rng: np.random.Generator) -> tuple[str, ...]:
    """One or two kinds, drawn as the server draws them for an answer it writes sloppily."""
    while (kinds := choose_kinds(rng)) == (CORRECT,):
        pass
    return kinds


def measure(n_answers: int, seed: int) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    sources = programs()
    current = dict(sources)
    counts: dict[str, Counter[str]] = {"clean": Counter(), "sloppy": Counter()}
    per_kind: dict[str, Counter[str]] = {kind: Counter() for kind in KINDS}
    names = sorted(current)
    history: dict[str, list[str]] = {name: [] for name in names}  # inspirations: crossovers
    made = tries = 0
    while made < n_answers and tries < 20 * n_answers:
        tries += 1
        name = names[tries % len(names)]
        parent = current[name]
        try:
            child = apply_edit(parent, mutate(parent, history[name][-3:], rng)).source
        except EditError:
            continue
        hunks = diff_hunks(parent, child)
        if not hunks:
            continue
        made += 1
        clean, got = outcome(parent, render(hunks))
        _count([counts["clean"]], clean, clean == "ok" and got != child)
        kinds = sloppy_kinds(rng)
        answer = write_sloppily(hunks, kinds, rng, parent=parent, child=child)
        result, got = outcome(parent, answer)
        wrong = result == "ok" and got != child
        _count([counts["sloppy"], *(per_kind[k] for k in kinds)], result, wrong)
        # the walk goes on from a child that parses; else it starts again from the seed
        current[name] = child if clean == "ok" else sources[name]
        history[name].append(parent)
    return {"programs": names, "answers": made, "counts": counts, "per_kind": per_kind}


def _count(counters: list[Counter[str]], result: str, wrong: bool) -> None:
    for counter in counters:
        counter[result] += 1
        counter["ok_wrong"] += wrong
        counter["answers"] += 1


def line(label: str, c: Counter[str]) -> str:
    n = max(c["answers"], 1)
    shares = "  ".join(f"{k} {c[k] / n:6.1%}" for k in OUTCOMES)
    wasted = (c["edit_error"] + c["syntax_error"]) / n
    return (
        f"{label:16} n={c['answers']:4}  {shares}  wasted {wasted:6.1%}  "
        f"ok_wrong {c['ok_wrong'] / n:6.1%}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--answers", type=int, default=300, help="edits measured (default 300)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the counts to this file")
    parser.add_argument(
        "--no-retry", action="store_true", help="apply without the check (no second mapping)"
    )
    args = parser.parse_args(argv)
    global RETRY
    RETRY = not args.no_retry
    result = measure(args.answers, args.seed)
    print(f"programs: {', '.join(result['programs'])}")  # type: ignore[arg-type]
    counts = result["counts"]
    per_kind = result["per_kind"]
    for label, counter in counts.items():  # type: ignore[attr-defined]
        print(line(label, counter))
    for kind, counter in per_kind.items():  # type: ignore[attr-defined]
        print(line(f"  {kind}", counter))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=dict))
    return 0


if __name__ == "__main__":
    sys.exit(main())
