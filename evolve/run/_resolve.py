"""What ``evoforge run X`` runs: a registered problem, a problem folder or spec file, a suite
(a built-in one, or a folder of problem folders), or a path in another format made into
problems by an adapter (KernelBench task files and folders, OpenEvolve folders:
:mod:`evoforge.problems.adapters`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evoforge.evolve.config import ConfigError
from evoforge.plugins import problems
from evoforge.problems import SPEC_FILENAME, Problem, examples, load_problem, suites
from evoforge.problems.adapters import adapt, is_task_source


@dataclass(frozen=True)
class Resolved:
    """The problems a reference names.

    Attributes:
        problems: one problem, or the tasks of a batch.
        notes: what an adapter decided or ignored, one line each (for stderr).
        batch: a suite of several problems (one run with one budget, or one run each).
        adapter: the adapter that made the problems ("" for evoforge problems).
    """

    problems: tuple[Problem, ...]
    notes: tuple[str, ...] = ()
    batch: bool = False
    adapter: str = ""


def resolve(
    ref: str,
    *,
    target: str | None = None,
    seed_file: str | Path | None = None,
) -> Resolved:
    """The problems ``ref`` names: a path (a problem spec, or another format through the
    adapters), a registered problem's name, or a suite's name.

    Costs a spec import per problem, and for an adapted path writing small generated folders
    (unchanged ones are left alone).

    Raises:
        ConfigError: nothing of that name or at that path can run, or ``target`` /
            ``seed_file`` were given for a problem that has no use for them.
        ProblemSpecError: the spec, or the adapted file, is malformed.
    """
    path = Path(ref).expanduser()
    if path.exists():
        if _is_spec(path):
            _no_adapter_options(ref, target, seed_file)
            return Resolved((load_problem(path),))
        adapted = adapt(path, target=target, seed_file=seed_file)
        if adapted is not None:
            return Resolved(adapted.problems, adapted.notes, adapted.batch, adapted.adapter)
        folders = _problem_folders(path)
        if folders:  # a folder of problem folders: a suite
            _no_adapter_options(ref, target, seed_file)
            return Resolved(tuple(load_problem(f) for f in folders), batch=True)
        if path.is_dir():
            raise ConfigError(
                f"{path} is not a problem: expected a problem folder ({SPEC_FILENAME} "
                "declaring name, objectives and evaluate(), plus a seed) or a folder of them "
                "(a suite), a KernelBench task "
                "file or a folder of them (class Model, get_inputs, get_init_inputs), an "
                "OpenEvolve folder (initial_program.* and evaluator.py), or a repository with "
                "an evoforge.toml (files to evolve, a check and a measure command)"
            )
        _no_adapter_options(ref, target, seed_file)
        return Resolved((load_problem(path),))
    registered = problems()
    if ref in registered:
        _no_adapter_options(ref, target, seed_file)
        return Resolved((load_problem(registered[ref]),))
    suite = suites().get(ref)
    if isinstance(suite, Path):
        resolved = resolve(str(suite), target=target, seed_file=seed_file)
        return Resolved(resolved.problems, resolved.notes, True, resolved.adapter)
    if suite is not None:
        _no_adapter_options(ref, target, seed_file)
        return Resolved(tuple(load_problem(registered[name]) for name in suite), batch=True)
    example = examples().get(ref)
    if example is not None:  # repo_example: a built-in folder in an adapter's format
        return resolve(str(example), target=target, seed_file=seed_file)
    raise ConfigError(
        f"no problem {ref!r}: not a path, a registered problem name or a suite "
        f"(registered: {', '.join(sorted(registered)) or 'none'}; suites: "
        f"{', '.join(sorted(suites()))}; examples: {', '.join(sorted(examples()))})"
    )


def resolve_problem(ref: str) -> Problem:
    """The one problem ``ref`` names (see :func:`resolve`; adapters use their defaults).

    Raises:
        ConfigError: as :func:`resolve`, or ``ref`` names a batch of several problems.
    """
    resolved = resolve(ref)
    if resolved.batch and len(resolved.problems) != 1:
        raise ConfigError(
            f"{ref} holds {len(resolved.problems)} problems; run them as a batch with "
            "`evoforge run` on the command line, or name one of them"
        )
    return resolved.problems[0]


def _problem_folders(path: Path) -> list[Path]:
    """The problem folders directly inside ``path`` (a suite of them), by name."""
    if not path.is_dir():
        return []
    return sorted(
        child
        for child in path.iterdir()
        if child.is_dir() and not child.name.startswith((".", "_")) and _is_spec(child)
    )


def _is_spec(path: Path) -> bool:
    if path.is_dir():
        return (path / SPEC_FILENAME).is_file()
    if path.suffix != ".py":
        return False
    try:
        return not is_task_source(path.read_text())
    except (OSError, UnicodeDecodeError):
        return True  # load_problem() says what is wrong with it


def _no_adapter_options(ref: str, target: str | None, seed_file: str | Path | None) -> None:
    if target is not None:
        raise ConfigError(
            f"--target {target} applies to KernelBench task files; {ref} is an evoforge "
            "problem whose spec names its evaluator"
        )
    if seed_file is not None:
        raise ConfigError(
            f"--seed-file applies to KernelBench task files; {ref} is an evoforge problem "
            "whose spec names its seed (seed_file)"
        )
