"""A run's prompt variants as ``evoforge prompts`` and the dashboard show them: each variant's
lineage, origin, what its children did, and the first line it changed from its parent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evoforge.evolve.mining._view import RunView, run_view

if TYPE_CHECKING:
    from evoforge.archive import Archive, PromptVariant, RunInfo

OFF_MESSAGE = (
    "prompt evolution was off for this run: set [search] prompt_evolution = true "
    "(prompt variants are recorded from then on)"
)
"""What to say for a run without variants."""
_ORDER = ("system", "task_diff", "task_rewrite", "task_crossover", "task_repair")


def prompt_variant_table(
    archive: Archive, run: RunInfo, *, view: RunView | None = None
) -> dict[str, Any]:
    """The run's variants, oldest first, each with its children's counts and best value (in the
    primary objective's own direction) and the first line it changed from its parent.

    ``variants`` is empty when prompts did not evolve in the run (``message`` then says how
    to turn them on).
    """
    view = view or run_view(archive, run)
    variants = archive.prompt_variants(run.id)
    stats = {s.variant_id: s for s in archive.prompt_variant_stats(run.id)}
    by_id = {v.id: v for v in variants}
    rows = []
    for v in variants:
        s = stats[v.id]
        parent = by_id.get(v.parent_id) if v.parent_id else None
        rows.append(
            {
                "id": v.id,
                "parent_id": v.parent_id,
                "origin": v.origin,
                "seq": v.seq,
                "children": s.children,
                "evaluated": s.evaluated,
                "improved": s.improved,
                "improvement_rate": s.improvement_rate,
                "best": view.value(s.best_score),
                "change": first_change(v, parent),
                "note": v.note,
                "templates": dict(v.templates),
            }
        )
    primary = view.primary
    return {
        "run_id": run.id,
        "objective": None if primary is None else primary.name,
        "direction": None if primary is None else str(primary.direction),
        "variants": rows,
        "message": "" if rows else OFF_MESSAGE,
    }


def first_change(variant: PromptVariant, parent: PromptVariant | None) -> str:
    """``template: line`` for the first line of ``variant`` its parent does not have (in
    the order a prompt shows them: system message, then diff, rewrite, crossover and repair
    tasks); ``""`` for a variant without a parent or with nothing new."""
    if parent is None:
        return ""
    order = {name: i for i, name in enumerate(_ORDER)}
    for name in sorted(variant.templates, key=lambda n: (order.get(n, len(order)), n)):
        text = variant.templates[name]
        before = set(parent.templates.get(name, "").split("\n"))
        for line in text.split("\n"):
            if line.strip() and line not in before:
                return f"{name}: {line.strip()}"
    return ""
