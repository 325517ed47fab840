"""Built-in plugin: the problems in ``problems/builtin`` (registered by folder name) and the
adapters for KernelBench, OpenEvolve and repository (``evoforge.toml``) formats."""

from pathlib import Path

from evoforge.plugins import hookimpl

BUILTIN_DIR = Path(__file__).parent / "builtin"


@hookimpl
def register_problems(register):
    for folder in sorted(BUILTIN_DIR.iterdir()):
        if (folder / "problem.py").is_file():
            register(folder.name, str(folder))


@hookimpl
def register_problem_adapters(register):
    from evoforge.problems.adapters import KERNELBENCH, OPENEVOLVE, REPOSITORY

    register(KERNELBENCH)
    register(OPENEVOLVE)
    register(REPOSITORY)
