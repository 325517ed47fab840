"""The adapter registry: a path that is not a problem spec becomes problems through the first
adapter that recognises it.

An adapter is two functions. ``detect(path)`` is cheap and imports nothing of the user's (it
reads file names and parses source text); ``adapt(path, options)`` writes real problem folders
(``problem.py`` + seed, under the evoforge cache by default, like
:func:`~evoforge.problems.define_problem`) and loads them, so the engine, its sandboxed workers
and ``resume`` see ordinary problems and nothing downstream special-cases a format.

Built-in adapters (KernelBench task files and folders, OpenEvolve folders) are registered by
:mod:`evoforge.problems._plugin` through the ``register_problem_adapters`` hook, exactly as a
third-party plugin registers its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from evoforge.problems import ProblemSpecError

if TYPE_CHECKING:
    from evoforge.problems import Problem


@dataclass(frozen=True)
class AdaptOptions:
    """What a user can say about how a path is adapted.

    Attributes:
        target: the kernel target of a KernelBench task (``"triton"`` or ``"cuda"``); None:
            the adapter's default. An adapter that has no targets refuses one.
        seed_file: the program to start from instead of the adapter's own seed.
        folder: where to write the generated problem folder(s); None: the evoforge cache.
    """

    target: str | None = None
    seed_file: Path | None = None
    folder: Path | None = None


@dataclass(frozen=True)
class Adapted:
    """What an adapter made of a path.

    Attributes:
        adapter: the adapter's name (``"kernelbench"``, ``"openevolve"``).
        source: the path that was adapted.
        problems: the problems, one per task; more than one means a batch.
        notes: what the adapter decided for the user, and what it ignored, one line each
            (the CLI prints them on stderr).
        batch: the path held several tasks (a folder of KernelBench files): run each, then
            report the suite's metrics.
    """

    adapter: str
    source: Path
    problems: tuple[Problem, ...]
    notes: tuple[str, ...] = ()
    batch: bool = False


@dataclass(frozen=True)
class Adapter:
    """A format evoforge can run unmodified.

    Attributes:
        name: short name (``"kernelbench"``), shown in notes and errors.
        detect: ``detect(path) -> bool``, cheap, importing nothing of the user's.
        adapt: ``adapt(path, options) -> Adapted``; raises
            :class:`~evoforge.problems.ProblemSpecError` naming the file and the fix.
        description: one line for listings.
    """

    name: str
    detect: Callable[[Path], bool]
    adapt: Callable[[Path, AdaptOptions], Adapted]
    description: str = ""
    targets: tuple[str, ...] = field(default=())


def adapt(
    path: Path | str,
    *,
    target: str | None = None,
    seed_file: Path | str | None = None,
    folder: Path | str | None = None,
) -> Adapted | None:
    """The problems the first matching adapter makes of ``path``; None when none matches.

    Example::

        adapted = adapt("KernelBench/level1/19_ReLU.py", target="triton")
        evoforge.run(adapted.problems[0], budget=20)

    Costs the adapter's work: parsing the files and writing a small folder per problem (an
    unchanged folder is not rewritten).

    Raises:
        ProblemSpecError: an adapter recognised the path but cannot adapt it (the message
            names the file and the fix), or ``target`` was given for a format without
            targets.
    """
    path = Path(path).expanduser().resolve()
    options = AdaptOptions(
        target=target,
        seed_file=Path(seed_file).expanduser().resolve() if seed_file is not None else None,
        folder=Path(folder).expanduser().resolve() if folder is not None else None,
    )
    for adapter in problem_adapters().values():
        if not adapter.detect(path):
            continue
        if target is not None and target not in adapter.targets:
            allowed = ", ".join(adapter.targets) or "none"
            raise ProblemSpecError(
                path,
                "target",
                f"{target!r} is not a target of {adapter.name} problems (targets: {allowed}); "
                "leave --target out",
            )
        return adapter.adapt(path, options)
    return None


def problem_adapters() -> dict[str, Adapter]:
    """The registered adapters by name, in the order they are tried (built-ins first).

    Raises:
        PluginError: a plugin registered something that is not an :class:`Adapter`, or a name
            another plugin already took.
    """
    from evoforge.plugins import DEFAULT_PLUGINS, PluginError, collect, load_plugins

    def entry(plugin: str, adapter: object) -> tuple[str, Adapter]:
        if not isinstance(adapter, Adapter):
            raise PluginError(
                f"plugin {plugin!r} registered {adapter!r} as a problem adapter; register an "
                "evoforge.problems.adapters.Adapter(name, detect, adapt)"
            )
        return adapter.name, adapter

    load_plugins()
    found = collect("register_problem_adapters", "problem adapter", entry)
    ordered = sorted(found.items(), key=lambda item: item[1][1] not in DEFAULT_PLUGINS)
    return {name: adapter for name, (adapter, _) in ordered}
