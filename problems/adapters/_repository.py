"""Repository problems: a folder (usually a git checkout) with an ``evoforge.toml``.

::

    name = "slowstats"
    files = ["slowstats/core.py", "slowstats/window.py"]   # globs allowed
    check = "python -m pytest -q tests"      # must exit 0 (the correctness gate)
    measure = "python bench.py"              # its last stdout line: a JSON object of metrics
    objectives = { runtime_s = "minimize" }
    timeout_s = 120                          # per command
    # optional: setup = "pip install -e ." (once per evaluation copy), descriptors,
    # memory_mb, exclude = ["data/big/**"] (left out of the copies), description, run_defaults,
    # [[stages]] (commands run before the check and measure: see _repo_stages)

The adapter writes an ordinary problem folder for the ``repo`` evaluator
(:mod:`evoforge.evaluators.repo`): the seed is the bundle of the evolving files
(:func:`~evoforge.problems.make_bundle`; a file with EVOLVE-BLOCKs keeps them, a file without
evolves whole), and the spec's ``baselines()`` runs the check and the measure on the
unchanged repository once per session, so a run refuses to start when the repository's own
tests fail, and its summary shows the best program's metrics as ratios to the base's. The
description (the prompt's problem statement) ends with the repository's tree and the
signatures of its other Python files (:mod:`~evoforge.problems.adapters._repo_summary`).

Globs are matched relative to the folder (``**`` crosses folders), sorted, files only, never
inside ``.git``; each must match at least one file, so a typo cannot silently evolve nothing.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from evoforge.base.settings import ConfigError, Settings
from evoforge.problems import (
    SPEC_FILENAME,
    BundleError,
    DescriptorRange,
    ProblemSpecError,
    load_problem,
    make_bundle,
)
from evoforge.problems.adapters._registry import Adapted, Adapter, AdaptOptions
from evoforge.problems.adapters._repo_stages import (
    RepoStage,
    cascade_options,
    check_stages,
    spec_stages,
)
from evoforge.problems.adapters._repo_summary import summary
from evoforge.problems.adapters._write import GENERATED, identifier, write_folder

CONFIG_FILE = "evoforge.toml"
SEED_FILE = "repository.bundle"
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__"})
MAX_FILE_BYTES = 1 << 20


class RepositoryConfig(Settings):
    """The ``evoforge.toml`` of a repository problem (see the module docstring)."""

    name: Annotated[str, Field(min_length=1)]
    files: Annotated[
        tuple[Annotated[str, Field(min_length=1)], ...], Field(min_length=1, strict=False)
    ]
    check: Annotated[str, Field(min_length=1)]
    measure: Annotated[str, Field(min_length=1)]
    objectives: Annotated[dict[str, Literal["maximize", "minimize"]], Field(min_length=1)]
    timeout_s: Annotated[float, Field(gt=0)] = Field(default=300.0, strict=False)
    memory_mb: Annotated[int, Field(gt=0)] = 4096
    setup: str | None = None
    setup_timeout_s: Annotated[float, Field(gt=0)] = Field(default=900.0, strict=False)
    exclude: Annotated[tuple[str, ...], Field(strict=False)] = ()
    stages: Annotated[tuple[RepoStage, ...], Field(strict=False)] = ()
    descriptors: dict[str, DescriptorRange] = Field(default_factory=dict)
    description: str = ""
    options: dict[str, Any] = Field(default_factory=dict)
    run_defaults: dict[str, Any] = Field(default_factory=dict)


def detect(path: Path) -> bool:
    return path.is_dir() and (path / CONFIG_FILE).is_file() and not (path / SPEC_FILENAME).exists()


def read_config(path: Path) -> RepositoryConfig:
    """The folder's ``evoforge.toml``, validated.

    Raises:
        ProblemSpecError: it is missing, is not TOML, or a field is missing or wrong.
    """
    config = path / CONFIG_FILE
    if not config.is_file():
        raise ProblemSpecError(
            path,
            CONFIG_FILE,
            f"the folder has no {CONFIG_FILE}; write one naming the files to evolve, a check "
            'and a measure command, e.g. files = ["pkg/*.py"], check = "python -m pytest -q", '
            'measure = "python bench.py", objectives = { runtime_s = "minimize" }',
        )
    try:
        data = tomllib.loads(config.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProblemSpecError(config, "toml", f"is not valid TOML: {exc}") from None
    try:
        parsed = RepositoryConfig(**data)
    except ConfigError as exc:
        raise ProblemSpecError(config, "fields", str(exc)) from None
    check_stages(parsed.stages, config)
    return parsed


def match_files(folder: Path, patterns: tuple[str, ...], where: Path) -> list[str]:
    """The relative paths the globs name, in the order of the patterns (each sorted).

    Raises:
        ProblemSpecError: a pattern leaves the folder or matches no file.
    """
    found: list[str] = []
    for index, pattern in enumerate(patterns):
        if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise ProblemSpecError(
                where,
                f"files[{index}]",
                f"{pattern!r} leaves the repository; give a path "
                "relative to the folder of evoforge.toml",
            )
        matched = sorted(
            str(p.relative_to(folder))
            for p in folder.glob(pattern)
            if p.is_file()
            and not p.is_symlink()
            and not SKIPPED_DIRS.intersection(p.relative_to(folder).parts)
        )
        if not matched:
            raise ProblemSpecError(
                where,
                f"files[{index}]",
                f"{pattern!r} matches no file in {folder}; fix the path or glob "
                "(relative to the folder of evoforge.toml, '**' for any depth)",
            )
        found += [m for m in matched if m not in found]
    return found


def read_files(folder: Path, paths: list[str], where: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    for path in paths:
        data = (folder / path).read_bytes()
        if len(data) > MAX_FILE_BYTES:
            raise ProblemSpecError(
                where, "files", f"{path} is {len(data)} bytes; evolve files under 1 MiB"
            )
        try:
            files[path] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ProblemSpecError(
                where, "files", f"{path} is not UTF-8 text; evolve only source files"
            ) from None
        if "\r\n" in files[path]:
            raise ProblemSpecError(
                where, "files", f"{path} has CRLF line endings; evolve files with LF endings"
            )
    return files


def adapt(path: Path, options: AdaptOptions) -> Adapted:
    """The repository as one problem of the ``repo`` evaluator (see the module docstring).

    Raises:
        ProblemSpecError: ``evoforge.toml`` is malformed, a glob matches nothing, an evolving
            file is not UTF-8 text, or a file holds lines that read as bundle lines.
    """
    config = read_config(path)
    where = path / CONFIG_FILE
    paths = match_files(path, config.files, where)
    files = read_files(path, paths, where)
    try:
        seed = make_bundle(files)
    except BundleError as exc:
        raise ProblemSpecError(where, "files", str(exc)) from None
    name = identifier(config.name, "")
    spec = _spec(name, path, config, paths)
    folder = write_folder(name, {SPEC_FILENAME: spec, SEED_FILE: seed}, options.folder)
    problem = load_problem(folder)
    whole = [p for p in paths if "EVOLVE-BLOCK-START" not in files[p]]
    notes = [
        f"{path.name}: a repository problem for the repo evaluator (written to {folder}); "
        f"{len(paths)} file(s) evolve: {', '.join(paths)}",
    ]
    if whole:
        notes.append(f"without EVOLVE-BLOCK markers, evolved whole: {', '.join(whole)}")
    return Adapted("repository", path, (problem,), tuple(notes))


def _language(paths: list[str]) -> str:
    suffixes = {Path(p).suffix.lower() for p in paths}
    if suffixes == {".py"}:
        return "python"
    return next(iter(sorted(suffixes))).lstrip(".") or "text"


def _spec(name: str, folder: Path, config: RepositoryConfig, paths: list[str]) -> str:
    options: dict[str, Any] = {
        **config.options,
        "repo_dir": str(folder),
        "files": list(paths),
        "check": config.check,
        "measure": config.measure,
        "setup": config.setup,
        "setup_timeout_s": config.setup_timeout_s,
        "exclude": list(config.exclude),
    }
    cascade = (
        cascade_options(config.stages, config.check, config.measure, config.timeout_s)
        if config.stages
        else []
    )
    stages_line, stage_functions = spec_stages(cascade) if cascade else ("", [])
    if cascade:
        options["stages"] = cascade
    description = config.description or (
        f"Repository {folder.name}: change the files below so that `{config.measure}` improves "
        f"while `{config.check}` still passes. Each file is shown under a line "
        "'# === FILE: <path> ==='; head each SEARCH/REPLACE block with the path of the file "
        "it changes."
    )
    description += "\n\n" + summary(folder, paths)
    lines = [
        f'"""{description.replace(chr(92), chr(92) * 2).replace(chr(34) * 3, "")}"""',
        "",
        GENERATED.format(source=folder / CONFIG_FILE).rstrip(),
        "",
        f"name = {name!r}",
        'evaluator = "repo"',
        f"objectives = {dict(config.objectives)!r}",
        f"descriptors = { {k: tuple(v) for k, v in config.descriptors.items()}!r}",
        f"timeout_s = {config.timeout_s!r}",
        f"memory_mb = {config.memory_mb!r}",
        "preload = []",
        f"seed_file = {SEED_FILE!r}",
        f"language = {_language(paths)!r}",
        f"options = {options!r}",
        f"run_defaults = {config.run_defaults!r}",
        *([stages_line] if stages_line else []),
        "",
        "",
        *stage_functions,
        "def baselines():",
        '    """The unchanged repository, checked and measured once per session."""',
        "    from evoforge.evaluators.repo import measure_base",
        "",
        "    return {'base': measure_base(__file__)}",
        "",
        "",
        "def evaluate(metrics):",
        '    """The measure command\'s metrics, as reported."""',
        "    return metrics",
        "",
    ]
    return "\n".join(lines)


REPOSITORY = Adapter(
    name="repository",
    detect=detect,
    adapt=adapt,
    description="repositories with an evoforge.toml (files, check and measure commands)",
)
