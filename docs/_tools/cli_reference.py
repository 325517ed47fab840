"""MkDocs hook: the CLI reference (docs/reference/cli.md) is written from the click commands at
build time, so it cannot drift from ``evoforge --help``.

The page holds the marker ``<!-- cli-reference -->``; this hook replaces it with every command's
``--help`` (subcommands included), as ``evoforge`` prints them with the built-in plugins loaded
(the plugins' commands included, ``devices`` for one), 100 columns wide.
"""

from __future__ import annotations

import os
from typing import Any

import click

MARKER = "<!-- cli-reference -->"
WIDTH = 100


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())


def reference() -> str:
    """Markdown: the group's help, then one section per command, in ``list_commands`` order."""
    os.environ["EVOFORGE_PLUGINS"] = ""  # the built-ins only, whatever else is installed here
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch prices
    from evoforge.evolve.cli import cli
    from evoforge.plugins import load_plugins, pm

    load_plugins()
    pm.hook.register_commands(cli=cli)
    root = click.Context(cli, info_name="evoforge", max_content_width=WIDTH, terminal_width=WIDTH)
    sections = [section("evoforge", cli, root, level=2)]
    sections += walk(cli, root, level=2)
    return "\n".join(sections)


def walk(group: click.Group, parent: click.Context, level: int) -> list[str]:
    sections = []
    for name in group.list_commands(parent):
        command = group.get_command(parent, name)
        if command is None or command.hidden:
            continue
        context = click.Context(command, info_name=name, parent=parent)
        sections.append(section(context.command_path, command, context, level))
        if isinstance(command, click.Group):
            sections += walk(command, context, level + 1)
    return sections


def section(title: str, command: click.Command, context: click.Context, level: int) -> str:
    anchor = title.replace(" ", "-")
    help_text = command.get_help(context)
    return f"{'#' * level} `{title}` {{#{anchor}}}\n\n```text\n{help_text}\n```\n"
