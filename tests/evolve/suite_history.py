"""A small finished suite written straight into an archive (no run needed), for the pages and
commands that read suites back."""

from __future__ import annotations

from pathlib import Path

from evoforge.archive import Archive, Program, Status, program_id
from evoforge.problems import Direction, Objective, Problem


def _program(run_id: str, seq: int, instructions: float, speedup: float) -> Program:
    source = f"int main() {{ return {seq}; }}\n"
    return Program(
        run_id=run_id, id=program_id(source), seq=seq, source=source, parent_id=None,
        island=0, generation=0, status=Status.OK, score=-instructions, cell=0,
        objectives={"instructions": instructions},
        metrics={"instructions": instructions, "speedup_vs_seed": speedup,
                 "speedup_vs_O3": speedup * 0.9},
    )  # fmt: skip


def build_suite_archive(db: Path) -> str:
    """A finished suite of two native-like tasks: one twice as fast as its seed, one not."""
    with Archive(db) as archive:
        suite = archive.create_suite(
            "pie_pair",
            budget=30,
            allocation="bandit",
            config={"floor": 5},
            tasks=[("pie_a", {"problem": "/p/a"}), ("pie_b", {"problem": "/p/b"})],
        )
        for ord, (name, best) in enumerate((("pie_a", 2.0), ("pie_b", 1.0))):
            problem = Problem(
                name=name,
                spec_path=Path(f"/p/{name}/problem.py"),
                seed_source="",
                objectives=(Objective("instructions", Direction.MINIMIZE),),
            )
            run = archive.create_run(problem, config={"budget": 5}, seed=0, run_id=f"{name}-run")
            archive.set_task_run(suite.id, ord, run.id)
            archive.record_grant(suite.id, ord, 5, spent=0, gain=0.0, why="floor")
            seed = _program(run.id, 0, 1000.0, 1.0)
            top = _program(run.id, 1, 1000.0 / best, best)
            for program in (seed, top) if best > 1 else (seed,):
                archive.add_program(program)
            winner = top if best > 1 else seed
            archive.update_run(
                run.id, status="finished", evaluations=15 if best > 1 else 5,
                best_score=winner.score, best_program_id=winner.id,
            )  # fmt: skip
        archive.record_grant(suite.id, 0, 10, spent=5, gain=0.69, why="bandit: index 0.1")
        archive.update_suite(suite.id, status="finished", stop_reason="budget spent")
        return suite.id
