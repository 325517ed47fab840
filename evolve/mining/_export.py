"""Take programs out of the archive: each as its own file, with what is known about it beside.

``NN-<id>.py`` holds the program exactly as stored (so the first 16 hex digits of its SHA-256
are its id: anyone can check the file is the program that was scored), ``NN-<id>.json`` its
run, problem, objectives in their own directions, metrics, descriptors, lineage and model.
:func:`verify` evaluates exported programs again through the problem's evaluator and says
whether they reproduce their stored objectives.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evoforge.evolve.mining._view import RunView

if TYPE_CHECKING:
    from evoforge.archive import EvalResult, Program, RunInfo
    from evoforge.problems import Problem

REL_TOL = 1e-9
"""Objectives reproduce when they agree to this relative tolerance (timings will not)."""


class ExportError(Exception):
    """An export that cannot be written: files in the way, nothing to export, no directory."""


@dataclass(frozen=True)
class Exported:
    """One exported program: its rank, the program, and the two files written."""

    rank: int
    program: Program
    source_path: Path
    metadata_path: Path


def metadata(run: RunInfo, program: Program, rank: int, view: RunView) -> dict[str, Any]:
    """What the ``.json`` beside an exported program holds."""
    source = program.source or ""
    return {
        "rank": rank,
        "program_id": program.id,
        "sha256": hashlib.sha256(source.encode()).hexdigest(),
        "run_id": run.id,
        "problem": run.problem,
        "problem_path": run.problem_path,
        "seq": program.seq,
        "objectives": program.objectives,
        "directions": {o.name: str(o.direction) for o in view.objectives},
        "score": program.score,
        "metrics": program.metrics,
        "descriptors": program.descriptors,
        "cell": program.cell,
        "island": program.island,
        "generation": program.generation,
        "parent_id": program.parent_id,
        "edit_kind": program.edit_kind,
        "model": program.model,
        "timings": program.timings,
        "device": program.device,
        "created_at": program.created_at,
    }


def export_programs(
    run: RunInfo,
    programs: Sequence[Program],
    directory: Path,
    *,
    view: RunView,
    force: bool = False,
) -> list[Exported]:
    """Write each program (ranked in the given order) and its metadata into ``directory``.

    The directory is created if needed. Existing files are never overwritten unless
    ``force``: an export that would is refused before anything is written.

    Raises:
        ExportError: nothing to export, a program without source, a file in the way, or
            ``directory`` is a file.
    """
    if not programs:
        raise ExportError(
            f"run {run.id} has no ok program to export yet; `evoforge failures {run.id}` "
            "shows what went wrong"
        )
    if directory.exists() and not directory.is_dir():
        raise ExportError(f"cannot export into {directory}: it is a file; name a directory")
    width = max(2, len(str(len(programs))))
    planned = []
    for rank, program in enumerate(programs, start=1):
        if program.source is None:
            raise ExportError(f"program {program.id} has no source (its edit failed)")
        stem = f"{rank:0{width}d}-{program.id}"
        planned.append((rank, program, directory / f"{stem}.py", directory / f"{stem}.json"))
    in_the_way = [str(p) for _, _, *paths in planned for p in paths if p.exists()]
    if in_the_way and not force:
        shown = ", ".join(in_the_way[:3]) + (" ..." if len(in_the_way) > 3 else "")
        raise ExportError(
            f"not overwriting {shown}; pass --force to replace them or choose another directory"
        )
    import json

    from evoforge.base import jsonio

    directory.mkdir(parents=True, exist_ok=True)
    done = []
    for rank, program, source_path, metadata_path in planned:
        assert program.source is not None  # checked while planning
        source_path.write_text(program.source, encoding="utf-8", newline="")
        data = metadata(run, program, rank, view)
        text = json.dumps(data, indent=2, default=jsonio.to_jsonable)
        metadata_path.write_text(text + "\n", encoding="utf-8")
        done.append(Exported(rank, program, source_path, metadata_path))
    return done


def reproduced(stored: dict[str, float], measured: dict[str, float]) -> bool:
    """Whether every stored objective was measured again, equal to :data:`REL_TOL`."""
    for name, value in stored.items():
        again = measured.get(name)
        if again is None or not math.isclose(value, again, rel_tol=REL_TOL, abs_tol=1e-12):
            return False
    return True


async def verify(problem: Problem, sources: Sequence[str]) -> list[EvalResult]:
    """Evaluate ``sources`` again through ``problem``'s evaluator (sandboxed, as in a run).

    Each is evaluated once as it is: knob tuning is off (a stored program holds its tuned
    values already, and tuning it again would measure other programs).
    """
    from evoforge.evaluators import evaluator_class

    cls = evaluator_class(problem.evaluator)
    results = []
    async with cls(replace(problem, tuning=None), workers=1) as evaluator:
        for source in sources:
            results.append(await evaluator.evaluate(source))
    return results
