"""``evoforge stats``, ``lineage``, ``pareto``, ``failures`` and ``compare``: mining a run.

Each objective is shown in its own direction (a minimised one is never negated); ``--json``
gives the same numbers for scripts.
"""

from __future__ import annotations

import datetime as dt

import click

from evoforge.evolve.cli._common import (
    db_option,
    echo,
    emit_json,
    json_option,
    open_archive,
    run_or_latest,
)
from evoforge.evolve.mining import fmt


def _when(timestamp: float | None) -> str:
    if timestamp is None:
        return "—"
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


def _money(cost: float | None, unpriced: int = 0) -> str:
    text = "unknown price" if cost is None else f"${cost:.4f}"
    if unpriced and cost is not None:
        text += f" (+{unpriced} calls of unknown price)"
    return text


@click.command()
@click.argument("run_id", required=False)
@db_option
@json_option
def stats(run_id, db, as_json):
    """Statistics of RUN_ID (default: the latest run): statuses, grid coverage and QD score,
    the best over evaluations (overall and per island), rate, tokens and cost per model,
    model calls per evaluation and the calls wasted by reason.

    \b
    Example:
        evoforge stats
        evoforge stats circle_packing-20261122 --json
    """
    from evoforge.evolve.mining import cost_text, run_stats

    with open_archive(db) as archive:
        data = run_stats(archive, run_or_latest(archive, run_id))
    if as_json:
        emit_json(data)
        return
    objective = data["objective"] or "score"
    direction = {"maximize": "max", "minimize": "min"}.get(data["direction"], "?")
    echo(f"{data['id']}  [{data['status']}]  problem {data['problem']}")
    echo(
        f"  evaluations {data['evaluations']}/{fmt(data['budget'])}  attempts {data['attempts']}"
        f"  duplicates {data['duplicates']}  elapsed {data['elapsed_s']:.1f} s  "
        f"{fmt(data['evaluations_per_minute'] and round(data['evaluations_per_minute'], 1))} "
        "evaluations/min"
    )
    echo(f"  started {_when(data['created_at'])}  last update {_when(data['updated_at'])}")
    total = sum(data["statuses"].values()) or 1
    echo(
        "  statuses "
        + ", ".join(f"{k} {v} ({100 * v / total:.0f}%)" for k, v in data["statuses"].items())
    )
    search = data["search"]
    if search["edits_applied"]:
        saved = search["edits_saved"]
        echo(
            "  edits located: "
            + ", ".join(f"{k} {v}" for k, v in search["edit_matches"].items())
            + f" ({saved} of {search['edits_applied']} applied diffs, "
            f"{100 * saved / search['edits_applied']:.0f}%, needed tolerant matching)"
        )
    if data["transfer"]:
        parts = [
            f"{label} {t['improved']}/{t['children']} improved"
            + ("" if t["rate"] is None else f" ({100 * t['rate']:.1f}%)")
            for label, t in data["transfer"].items()
        ]
        echo("  children with / without another task's elite in the prompt: " + "; ".join(parts))
    if data["novelty_rejected"]:
        echo(
            f"  duplicates: {data['novelty_rejected']} candidates were "
            f"{data['status_labels']['duplicate']} (status duplicate)"
        )
    grid = data["grid"]
    coverage = "—" if grid["coverage"] is None else f"{100 * grid['coverage']:.1f}%"
    echo(
        f"  grid {grid['elites']}/{fmt(grid['cells'])} cells ({coverage} coverage)  "
        f"QD score {fmt(grid['qd_score'])}"
    )
    echo(
        f"  best {objective} {fmt(data['best'])} ({direction}) program "
        f"{data['best_program_id'] or '—'} at evaluation {fmt(data['best_evaluation'])}"
    )
    steps = data["best_over_evaluations"]
    if steps:
        echo(
            f"  best {objective} over evaluations: "
            + ", ".join(f"{s['evaluation']}: {fmt(s['value'])}" for s in steps)
        )
    for island in data["islands"]:
        echo(
            f"  island {island['island']}: best {fmt(island['best'])}, {island['elites']} "
            f"elites, {island['resets']} resets, {island['migrations']} migrations"
        )
    echo(
        f"  tokens in/out {data['tokens_in']}/{data['tokens_out']}  cost "
        f"{_money(data['cost_usd'], data['unpriced_calls'])}"
    )
    echo("  " + cost_text(data["cost"]))
    for m in data["models"]:
        latency = "—" if m["mean_latency_s"] is None else f"{m['mean_latency_s']:.2f} s"
        echo(
            f"  model {m['model']}: {m['calls']} calls, {m['retries']} retries, "
            f"{m['errors']} failed, tokens {m['tokens_in']}/{m['tokens_out']}, "
            f"{_money(m['cost_usd'], m['unpriced'])}, mean latency {latency}"
        )
    if data["stop_reason"]:
        echo(f"  last stop: {data['stop_reason']}")


@click.command()
@click.argument("program_id")
@click.option("--run", "run_id", help="Run to look in when the id exists in several.")
@click.option("--diff", "with_diff", is_flag=True, help="Show each step's diff as well.")
@db_option
@json_option
def lineage(program_id, run_id, with_diff, db, as_json):
    """The ancestry of PROGRAM_ID (an id or unique prefix), from the seed: each step's
    objective value and change, its edit (kind, lines changed) and the model that wrote it.

    \b
    Example:
        evoforge lineage 3fa2
        evoforge lineage 3fa2 --diff
    """
    from evoforge.evolve.mining import run_view

    with open_archive(db) as archive:
        program = archive.find_program(program_id, run_id=run_id)
        view = run_view(archive, archive.run(program.run_id))
        chain = archive.lineage(program.run_id, program.id)
        diffs = [archive.diff(p.run_id, p.id) if p.source is not None else "" for p in chain]
    steps = []
    previous = None
    for index, (p, diff) in enumerate(zip(chain, diffs, strict=True)):
        added = sum(1 for line in diff.splitlines() if line[:1] == "+" and line[:3] != "+++")
        removed = sum(1 for line in diff.splitlines() if line[:1] == "-" and line[:3] != "---")
        value = view.value(p.score)
        change = None
        if p.score is not None and previous is not None:
            change = view.value(p.score) - view.value(previous)
        steps.append(
            {
                "step": index,
                "id": p.id,
                "seq": p.seq,
                "generation": p.generation,
                "island": p.island,
                "status": str(p.status),
                "value": value,
                "change": change,
                "improved": p.score is not None and previous is not None and p.score > previous,
                "objectives": p.objectives,
                "edit_kind": p.edit_kind,
                "model": p.model,
                "lines_added": added if p.parent_id else None,
                "lines_removed": removed if p.parent_id else None,
                **({"diff": diff} if with_diff or as_json else {}),
            }
        )
        if p.score is not None:
            previous = p.score
    if as_json:
        primary = view.primary
        emit_json(
            {
                "run_id": program.run_id,
                "program_id": program.id,
                "objective": None if primary is None else primary.name,
                "direction": None if primary is None else str(primary.direction),
                "steps": steps,
            }
        )
        return
    name = view.primary.name if view.primary else "score"
    echo(f"lineage of {program.id} in run {program.run_id} ({len(steps)} steps)")
    echo(
        f"{'step':>4}  {'program':16}  {'seq':>6}  {name:>14}  {'change':>12}  "
        f"{'edit':10}  {'lines':>9}  model"
    )
    for s in steps:
        shown = "" if s["change"] is None else f"{s['change']:+.6g}"
        lines = "" if s["lines_added"] is None else f"+{s['lines_added']}/-{s['lines_removed']}"
        value = fmt(s["value"]) if s["status"] == "ok" else s["status"]
        echo(
            f"{s['step']:>4}  {s['id']:16}  {s['seq']:>6}  {value:>14}  {shown:>12}  "
            f"{s['edit_kind']:10}  {lines:>9}  {s['model'] or '—'}"
        )
        if with_diff and s.get("diff"):
            echo(s["diff"].rstrip("\n"))


@click.command()
@click.argument("run_id", required=False)
@click.option(
    "--objectives",
    help="Comma-separated objectives to compare on (default: all the run's objectives).",
)
@db_option
@json_option
def pareto(run_id, objectives, db, as_json):
    """The Pareto front of RUN_ID (default: the latest run): the ok programs no other beats
    on every objective, each objective in its own direction.

    \b
    Example:
        evoforge pareto --objectives speedup,max_abs_error
    """
    from evoforge.evolve.mining import arrow, run_view

    with open_archive(db) as archive:
        run = run_or_latest(archive, run_id)
        view = run_view(archive, run)
        if not view.objectives:
            raise click.ClickException(
                f"run {run.id} records no objectives and its problem spec cannot be read "
                f"from {run.problem_path}"
            )
        chosen = view.objectives
        if objectives:
            names = [n.strip() for n in objectives.split(",") if n.strip()]
            try:
                chosen = tuple(view.objective(n) for n in names)
            except KeyError as exc:
                raise click.ClickException(str(exc.args[0])) from None
            if not chosen:
                raise click.ClickException("--objectives names no objective")
        front = archive.pareto_front(run.id, chosen)
    rows = [
        {
            "id": p.id,
            "seq": p.seq,
            "island": p.island,
            "model": p.model,
            "objectives": {o.name: p.objectives.get(o.name) for o in chosen},
        }
        for p in front
    ]
    first = chosen[0]
    sign = 1 if str(first.direction) == "maximize" else -1
    rows.sort(key=lambda r: (-sign * r["objectives"][first.name], r["seq"]))
    if as_json:
        emit_json(
            {
                "run_id": run.id,
                "objectives": [{"name": o.name, "direction": str(o.direction)} for o in chosen],
                "front": rows,
            }
        )
        return
    header = "  ".join(f"{o.name + ' (' + arrow(o) + ')':>20}" for o in chosen)
    echo(f"Pareto front of {run.id}: {len(rows)} programs")
    echo(f"{'program':16}  {'seq':>6}  {header}")
    for r in rows:
        values = "  ".join(f"{fmt(v):>20}" for v in r["objectives"].values())
        echo(f"{r['id']:16}  {r['seq']:>6}  {values}")


@click.command()
@click.argument("run_id", required=False)
@click.option("--status", help="Only this status (e.g. runtime_error); leaves out model errors.")
@click.option("-n", "count", default=20, show_default=True, help="How many groups.")
@db_option
@json_option
def failures(run_id, status, count, db, as_json):
    """The failed attempts of RUN_ID (default: the latest run), grouped by status and by their
    message with numbers masked; largest group first, with the latest example of each. Model
    calls that failed (no key, unknown model, provider errors) come first, grouped by kind,
    model and message, with the fix where one is known.

    \b
    Example:
        evoforge failures
        evoforge failures --status runtime_error -n 5
    """
    from evoforge.archive import Status
    from evoforge.evolve.mining import failed_calls_summary, failure_groups, model_failures

    if status is not None:
        try:
            if Status(status) is Status.OK:
                raise ValueError
        except ValueError:
            allowed = ", ".join(s.value for s in Status if s is not Status.OK)
            raise click.ClickException(
                f"--status {status!r} is not a failure status; use one of {allowed}"
            ) from None
    with open_archive(db) as archive:
        run = run_or_latest(archive, run_id)
        groups = failure_groups(archive, run.id, status=status)
        total = archive.count_programs(run.id)
        calls = archive.llm_calls(run.id) if status is None else []
    failed = sum(g.count for g in groups)
    model = model_failures(calls)
    if as_json:
        emit_json(
            {
                "run_id": run.id,
                "run_status": str(run.status),
                "stop_reason": run.stop_reason,
                "attempts": total,
                "failed": failed,
                **failed_calls_summary(model),
                "groups": [g.to_dict() for g in groups[:count]],
                "more_groups": max(0, len(groups) - count),
            }
        )
        return
    calls_failed = sum(m.count for m in model)  # attempts too, though no program came of them
    echo(
        f"{run.id}: {failed + calls_failed} of {total + calls_failed} attempts failed, in "
        f"{len(groups) + len(model)} groups"
    )
    if model:
        echo(
            f"{sum(m.count for m in model)} model calls failed (no program came of them), "
            f"in {len(model)} groups:"
        )
        for m in model[:count]:
            message = m.message.removeprefix(f"{m.model}: ")
            echo(f"{m.count:>7}  {m.kind:14}  {m.model}: {message[:300]}")
            if m.hint:
                echo(f"         {m.hint}")
    if run.status == "failed" and run.stop_reason:
        echo(f"The run failed: {run.stop_reason}")
    for g in groups[:count]:
        echo(
            f"{g.count:>7}  {g.status:14}  {g.signature}\n"
            f"         latest: program {g.example_id} (seq {g.last_seq}): {g.example[:300]}"
        )
    if len(groups) > count:
        echo(f"... and {len(groups) - count} smaller groups (-n to see more)")


@click.command()
@click.argument("run_ids", nargs=-1, required=True)
@db_option
@json_option
def compare(run_ids, db, as_json):
    """Compare runs (ids or unique prefixes, two or more): best at the same evaluation
    counts, evaluations each needed to reach the weakest final best, statuses, cost.

    \b
    Example:
        evoforge compare circle_packing-20261122-0315 circle_packing-20261123-0940
    """
    from evoforge.evolve.mining import compare_runs

    if len(run_ids) < 2:
        raise click.ClickException("compare needs at least two runs")
    with open_archive(db) as archive:
        runs = [archive.find_run(ref) for ref in run_ids]
        if len({r.id for r in runs}) < len(runs):
            raise click.ClickException("the same run is named twice; name different runs")
        data = compare_runs(archive, runs)
    if not data["comparable"]:
        echo(
            "warning: these runs rank by different objectives; their values mean different things",
            err=True,
        )
    if as_json:
        emit_json(data)
        return
    rows = data["runs"]
    width = max(12, *(len(r["id"]) for r in rows))
    objective = data["objective"] or "score"

    def line(label, values):
        echo(f"{label:28}" + "".join(f"  {v:>{width}}" for v in values))

    line("", [r["id"] for r in rows])
    line("problem", [r["problem"] for r in rows])
    line("status", [r["status"] for r in rows])
    line("evaluations", [f"{r['evaluations']}/{fmt(r['budget'])}" for r in rows])
    line(f"best {objective}", [fmt(r["best"]) for r in rows])
    for mark in data["checkpoints"]:
        line(f"  after {mark} evaluations", [fmt(r["best_at"][str(mark)]) for r in rows])
    if data["target"] is not None:
        line(
            f"evaluations to {fmt(data['target'])}",
            [fmt(r["evaluations_to_reach_target"]) for r in rows],
        )
    statuses = sorted({s for r in rows for s in r["statuses"]})
    for s in statuses:
        counts = [r["statuses"].get(s, 0) for r in rows]
        shares = [100 * r["status_shares"].get(s, 0) for r in rows]
        line(s, [f"{n} ({share:.0f}%)" for n, share in zip(counts, shares, strict=True)])
    line("elapsed", [f"{r['elapsed_s']:.0f} s" for r in rows])
    line("tokens in/out", [f"{r['tokens_in']}/{r['tokens_out']}" for r in rows])
    line("cost", [f"${r['cost_usd']:.4f}" for r in rows])
