"""Seed an archive with a large synthetic run of circle_packing, directly (no evaluation).

Shared by the dashboard benchmark: ``size`` attempts with real lineage (each parent is a
recent ok program of its island), the status mix of a real run (65 % ok, 10 % incorrect, 10 %
runtime_error, 5 % timeout, 10 % edit_error, with error artifacts), one model call per attempt
(tokens, cost, latency), timestamps two seconds apart, the grids filled as a run would and the
run's counters set.
"""

from __future__ import annotations

import numpy as np

from evoforge.archive import Archive, Program, Status, program_id

STATUSES = (
    (Status.OK, 0.65),
    (Status.INCORRECT, 0.10),
    (Status.RUNTIME_ERROR, 0.10),
    (Status.TIMEOUT, 0.05),
    (Status.EDIT_ERROR, 0.10),
)
ERRORS = {
    Status.INCORRECT: "circles {} and {} overlap by {:.3g}",
    Status.RUNTIME_ERROR: "IndexError: index {} is out of bounds for axis 0 with size {}",
    Status.TIMEOUT: "the candidate ran longer than {} s (and {}) {}",
    Status.EDIT_ERROR: "block 1: its SEARCH text was not found ({} {} {})",
}
EDIT = "<<<<<<< SEARCH\nGROW_PASSES = 1\n=======\nGROW_PASSES = 2\n>>>>>>> REPLACE"
MODELS = ("openai/gpt-4o-mini", "anthropic/claude-haiku", "offline/mutator")


def seed_run(archive: Archive, problem, size: int, islands: int = 4, start: float = 1.7e9) -> str:
    """Write one run of ``size`` attempts; returns its id."""
    run_id = archive.create_run(
        problem, config={"budget": size, "problem": "circle_packing"}, seed=0
    ).id
    archive.record_event(
        run_id,
        "run_start",
        data={"objectives": [o.name for o in problem.objectives],
              "directions": {o.name: str(o.direction) for o in problem.objectives},
              "descriptors": [[d.name, d.low, d.high, d.bins] for d in problem.descriptors]},
    )  # fmt: skip
    rng = np.random.default_rng(0)
    base = problem.seed_source
    kinds, weights = zip(*STATUSES, strict=True)
    recent: list[list[Program]] = [[] for _ in range(islands)]
    best = None
    evaluations = tokens_in = tokens_out = 0
    cost = 0.0
    for chunk in range(0, size, 2000):
        with archive.transaction():
            for seq in range(chunk, min(size, chunk + 2000)):
                island = seq % islands
                pool = recent[island] or recent[0]
                parent = pool[int(rng.integers(len(pool)))] if pool else None
                status = Status.OK if parent is None else kinds[rng.choice(5, p=weights)]
                ok = status is Status.OK
                source = None
                if status is not Status.EDIT_ERROR:
                    source = base.replace("GROW_PASSES = 1", f"GROW_PASSES = 1  # v{seq}")
                numbers = rng.integers(0, 30, size=3)
                value = float(rng.uniform(1.0, 2.6)) if ok else None
                cv, border = float(rng.uniform(0, 0.5)), float(rng.uniform(0, 1))
                created = start + 2.0 * seq
                model = None if parent is None else MODELS[seq % len(MODELS)]
                program = Program(
                    run_id=run_id,
                    id=program_id(source) if source else f"e{seq:015d}",
                    seq=seq,
                    source=source,
                    parent_id=parent.id if parent else None,
                    island=island,
                    generation=parent.generation + 1 if parent else 0,
                    status=status,
                    edit=EDIT,
                    edit_kind="diff" if parent else "seed",
                    score=value,
                    cell=(min(int(cv * 20), 9) * 10 + min(int(border * 10), 9)) if ok else None,
                    objectives={"sum_radii": value} if ok else {},
                    descriptors={"radius_cv": cv, "border_fraction": border} if ok else {},
                    metrics={"sum_radii": value, "n_valid": 26} if ok else {"n_valid": 20},
                    model=model,
                    artifacts={} if ok else {"error": ERRORS[status].format(*numbers)},
                    created_at=created,
                )
                archive.add_program(program)
                evaluations += status.evaluated
                if model is not None:
                    p_in, p_out = int(rng.integers(2000, 6000)), int(rng.integers(100, 900))
                    price = None if model.startswith("offline") else (p_in + 4 * p_out) * 1e-7
                    archive.record_llm_call(
                        run_id, seq=seq, model=model, latency_s=float(rng.uniform(0.5, 4)),
                        status="ok", program_id=program.id, prompt_tokens=p_in,
                        completion_tokens=p_out, cost_usd=price,
                    )  # fmt: skip
                    tokens_in, tokens_out, cost = (
                        tokens_in + p_in,
                        tokens_out + p_out,
                        cost + (price or 0),
                    )
                if ok:
                    for grid in (island, -1):
                        archive.offer(run_id, grid, program)
                    recent[island] = (recent[island] + [program])[-200:]
                    if best is None or value > best.score:
                        best = program
    archive.update_run(
        run_id, status="finished", stop_reason=f"budget of {size} evaluations reached",
        next_seq=size, evaluations=evaluations, attempts=size, elapsed_s=2.0 * size,
        best_score=best.score, best_program_id=best.id, tokens_in=tokens_in,
        tokens_out=tokens_out, cost_usd=cost,
    )  # fmt: skip
    for island in range(islands):
        elites = archive.elites(run_id, island)
        archive.set_island_state(run_id, island, best_score=max(e.score for e in elites))
    return run_id
