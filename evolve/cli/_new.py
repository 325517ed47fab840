"""``evoforge new``: a new problem folder to start from (the templates live in
:mod:`evoforge.problems`, which writes them; this is only the command)."""

from __future__ import annotations

from pathlib import Path

import click

from evoforge.evolve.cli._common import echo
from evoforge.problems import SCAFFOLD_KINDS

_WHAT = {
    "python": "a Python program scored by evaluate()",
    "native": "a C program, its tests and callgrind's instruction count",
    "repo": "a repository with an evoforge.toml: a check and a measure command",
    "kernel": "a KernelBench task and a Triton kernel, run in Triton's interpreter on a CPU",
}


@click.command("new")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option(
    "--kind",
    type=click.Choice(SCAFFOLD_KINDS),
    default=SCAFFOLD_KINDS[0],
    show_default=True,
    help="; ".join(f"{kind}: {what}" for kind, what in _WHAT.items()),
)
@click.option("--name", help="The problem's name (default: made from FOLDER's name).")
def new(folder: Path, kind: str, name: str | None) -> None:
    """Write a new problem folder FOLDER of the given kind: a problem that runs as written,
    with a seed (EVOLVE-BLOCK markers around what evolves) and a test that runs it.

    \b
    Example:
        evoforge new my_problem --kind native
        evoforge run my_problem --budget 50
        python -m pytest my_problem
    """
    from evoforge.problems import ScaffoldError, scaffold

    try:
        written = scaffold(folder, kind, name=name)
    except ScaffoldError as exc:
        raise click.ClickException(str(exc)) from None
    echo(f"Wrote a {kind} problem ({_WHAT[kind]}) in {folder}:")
    for path in written:
        echo(f"  {path.relative_to(folder)}")
    echo("Next:")
    echo(f"  evoforge run {folder} --budget 50")
    echo(f"  python -m pytest {folder}")
