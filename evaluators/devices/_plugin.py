"""Built-in plugin: the ``evoforge devices`` command (this host's accelerators, and why not)."""

from __future__ import annotations

import json

import click

from evoforge.plugins import hookimpl


@click.command("devices")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def devices_command(as_json: bool) -> None:
    """List this host's devices (CPU, CUDA, TPU, JAX GPU, Metal, Neuron) and why any is missing.

    \b
    Example:
        evoforge devices
        evoforge devices --json
    """
    from evoforge.evaluators.devices import KINDS, fingerprint, inventory

    found = inventory()
    if as_json:
        data = found.to_dict()
        data["fingerprint"] = fingerprint()
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"cpu cores usable: {found.cpu_cores}")
    for kind in KINDS:
        devices = found.of_kind(kind)
        if not devices:
            click.echo(f"{kind:8} none: {found.why_none(kind)}")
        for device in devices:
            details = ", ".join(f"{k}={v}" for k, v in device.details.items())
            line = f"{kind:8} #{device.index} {device.name}"
            click.echo(f"{line} ({details})" if details else line)


@hookimpl
def register_commands(cli: click.Group) -> None:
    cli.add_command(devices_command)
