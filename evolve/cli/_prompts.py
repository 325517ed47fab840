"""``evoforge prompts``: the prompt variants of a run and how their children fared."""

from __future__ import annotations

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


@click.command()
@click.argument("run_id", required=False)
@db_option
@json_option
def prompts(run_id, db, as_json):
    """Prompt variants of RUN_ID (default: the latest run), oldest first: children,
    evaluated, improved and improvement rate, best value, origin, the variant each came from,
    and the first line it changed. Variants exist when ``[search] prompt_evolution = true``.

    \b
    Example:
        evoforge prompts
        evoforge prompts circle_packing-20261122 --json
    """
    from evoforge.evolve.mining import prompt_variant_table

    with open_archive(db) as archive:
        table = prompt_variant_table(archive, run_or_latest(archive, run_id))
    if as_json:
        emit_json(table)
        return
    if not table["variants"]:
        echo(f"{table['run_id']}: {table['message']}")
        return
    name = table["objective"] or "score"
    echo(f"prompt variants of {table['run_id']} ({len(table['variants'])})")
    echo(
        f"{'variant':16}  {'origin':13}  {'seq':>6}  {'children':>8}  {'evaluated':>9}  "
        f"{'improved':>8}  {'rate':>6}  {'best ' + name:>14}  parent"
    )
    for v in table["variants"]:
        rate = "—" if v["improvement_rate"] is None else f"{100 * v['improvement_rate']:.0f}%"
        echo(
            f"{v['id']:16}  {v['origin']:13}  {v['seq']:>6}  {v['children']:>8}  "
            f"{v['evaluated']:>9}  {v['improved']:>8}  {rate:>6}  {fmt(v['best']):>14}  "
            f"{v['parent_id'] or '—'}"
        )
        if v["change"]:
            echo(f"    changed {_cut(v['change'])}")
        if v["note"]:
            echo(f"    note: {_cut(v['note'])}")


def _cut(text: str, limit: int = 110) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
