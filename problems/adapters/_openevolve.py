"""OpenEvolve problem folders as problems, unmodified.

An OpenEvolve folder holds ``initial_program.<ext>``, ``evaluator.py`` defining
``evaluate(program_path)`` (and optionally ``evaluate_stage1/2/3`` for a cascade), and
optionally ``config.yaml``. This adapter writes a problem folder for the ``openevolve``
evaluator (:mod:`evoforge.evaluators.openevolve`), which runs the folder's own evaluator on each
candidate, in the sandbox, exactly as OpenEvolve calls it: the program written to a file, the
file's path passed in, a dict of metrics (or an ``EvaluationResult`` with metrics and artifacts)
returned.

Decisions, each in OpenEvolve's sense unless said otherwise:

- the primary objective is ``fitness``, OpenEvolve's ranking score, which every evaluation
  reports: ``combined_score`` when returned, else the mean of the numeric metrics (booleans
  and the ``feature_dimensions`` left out) (:mod:`evoforge.evaluators.openevolve`);
- a cascade (``cascade_evaluation``, on by default, with ``evaluate_stage1`` defined) runs
  as OpenEvolve runs it: ``evaluate_stage2`` only if stage 1's metrics pass the first
  threshold, ``evaluate_stage3`` only if the merged metrics pass the second; a program that
  misses a threshold keeps the metrics of the stages it ran and is ranked by them (the
  evaluator's ``options['cascade_thresholds']``);
- ``feature_dimensions`` / ``feature_bins`` (OpenEvolve's defaults, complexity and
  diversity, when the config names none) become descriptors with their bins
  (:mod:`evoforge.problems.adapters._openevolve_features`);
- a program without EVOLVE-BLOCK markers is evolvable as a whole (as in OpenEvolve): one block
  around the file, marked with the language's comment syntax;
- ``config.yaml`` is mapped by :mod:`evoforge.problems.adapters._openevolve_config`; what has
  no meaning here is reported as ignored. A folder's other configs (``config_phase_1.yaml``,
  which ``openevolve-run … --config`` names) are used by naming the file instead of the
  folder: ``evoforge run examples/circle_packing/config_phase_1.yaml``.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any

from evoforge.problems import (
    END_MARKER,
    SPEC_FILENAME,
    START_MARKER,
    BlockError,
    ProblemSpecError,
    find_blocks,
    load_problem,
)
from evoforge.problems.adapters._openevolve_config import Mapped, map_config, read_config
from evoforge.problems.adapters._openevolve_features import (
    DEFAULT_DIMENSIONS,
    Features,
    feature_dimensions,
)
from evoforge.problems.adapters._registry import Adapted, Adapter, AdaptOptions
from evoforge.problems.adapters._write import GENERATED, identifier, sha256, write_folder

EVALUATOR_FILE = "evaluator.py"
CONFIG_FILES = ("config.yaml", "config.yml")
CONFIG_SUFFIXES = (".yaml", ".yml")
INITIAL_PROGRAM = "initial_program"
STAGE_FUNCTIONS = ("evaluate_stage1", "evaluate_stage2", "evaluate_stage3")
_COMMENT = {
    ".py": "#",
    ".r": "#",
    ".jl": "#",
    ".sh": "#",
    ".rb": "#",
    ".pl": "#",
    ".c": "//",
    ".h": "//",
    ".cc": "//",
    ".cpp": "//",
    ".hpp": "//",
    ".cu": "//",
    ".metal": "//",
    ".rs": "//",
    ".go": "//",
    ".js": "//",
    ".ts": "//",
    ".java": "//",
    ".kt": "//",
    ".swift": "//",
    ".scala": "//",
    ".cs": "//",
    ".zig": "//",
    ".sql": "--",
    ".lua": "--",
    ".hs": "--",
    ".m": "%",
    ".tex": "%",
}


def initial_programs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob(f"{INITIAL_PROGRAM}.*") if p.is_file())


def detect(path: Path) -> bool:
    """An OpenEvolve folder, or a config file inside one (``openevolve-run``'s ``--config``)."""
    if path.is_file() and path.suffix.lower() in CONFIG_SUFFIXES:
        path = path.parent
    return (
        path.is_dir()
        and (path / EVALUATOR_FILE).is_file()
        and not (path / SPEC_FILENAME).exists()
        and len(initial_programs(path)) == 1
    )


def _config_of(path: Path) -> tuple[Path, Path | None, list[str]]:
    """The folder, the config to map, and a note naming the configs a folder run leaves
    unread (a folder with ``config_phase_1.yaml`` and ``config_phase_2.yaml`` but no
    ``config.yaml`` runs on OpenEvolve's defaults unless one is named)."""
    if path.is_file():
        return path.parent, path, []
    config = next((path / n for n in CONFIG_FILES if (path / n).is_file()), None)
    if config is not None:
        return path, config, []
    others = sorted(p.name for p in path.iterdir() if p.suffix.lower() in CONFIG_SUFFIXES)
    if not others:
        return path, None, []
    return (
        path,
        None,
        [
            f"no config.yaml: OpenEvolve's defaults; to run with one of {', '.join(others)}, "
            f"name it instead of the folder (evoforge run {path / others[0]}), as "
            "openevolve-run's --config does"
        ],
    )


def adapt(path: Path, options: AdaptOptions) -> Adapted:
    """The folder as one problem of the ``openevolve`` evaluator (see the module docstring).

    Raises:
        ProblemSpecError: ``evaluator.py`` does not parse or defines neither ``evaluate`` nor
            ``evaluate_stage1``, a mapped ``config.yaml`` setting has the wrong kind, or the
            program's EVOLVE-BLOCK markers are broken.
    """
    path, config_path, config_notes = _config_of(path)
    evaluator = path / EVALUATOR_FILE
    initial = options.seed_file or initial_programs(path)[0]
    source = evaluator.read_text()
    functions = _functions(evaluator, source)
    mapped = map_config(read_config(config_path), config_path) if config_path else Mapped()
    suffix = mapped.suffix or initial.suffix or ".py"
    seed, wrapped = _seed(initial, suffix)
    stages, stage_notes = _stages(functions, mapped)
    features = feature_dimensions(
        mapped.feature_dimensions, mapped.feature_bins, mapped.archive_size, source
    )
    objective = "fitness"
    # Runs of one folder with different configs are told apart by name in an archive.
    named = config_path.stem if config_path and config_path.name not in CONFIG_FILES else None
    name = identifier(f"{path.name}_{named}" if named else path.name, "oe")
    seed_file = f"{INITIAL_PROGRAM}{suffix}"
    spec = _spec(name, path, source, seed_file, suffix, stages, mapped, features)
    folder = write_folder(name, {SPEC_FILENAME: spec, seed_file: seed}, options.folder)
    problem = load_problem(folder)
    notes = [
        f"{path.name}: an OpenEvolve folder for the openevolve evaluator (written to {folder}); "
        f"its evaluator runs in the sandbox with each candidate; primary objective {objective}"
        " (OpenEvolve's score: combined_score when returned, else the mean of the metrics)"
    ]
    if wrapped:
        notes.append(f"{initial.name} has no EVOLVE-BLOCK markers: the whole file evolves")
    notes += config_notes + stage_notes + features.notes
    if config_path is not None:
        notes += mapped.notes(config_path)
    return Adapted("openevolve", path, (problem,), tuple(notes))


def _functions(evaluator: Path, source: str) -> set[str]:
    try:
        tree = ast.parse(source, filename=str(evaluator))
    except SyntaxError as exc:
        raise ProblemSpecError(evaluator, "syntax", f"does not parse: {exc}") from None
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    if "evaluate" not in names and "evaluate_stage1" not in names:
        raise ProblemSpecError(
            evaluator,
            "evaluate",
            "defines neither evaluate(program_path) nor evaluate_stage1(program_path); "
            "OpenEvolve calls one of them with the program's file path",
        )
    return names


def _seed(initial: Path, suffix: str) -> tuple[str, bool]:
    text = initial.read_text()
    if START_MARKER in text or END_MARKER in text:
        try:
            find_blocks(text, origin=str(initial))
        except BlockError as exc:
            raise ProblemSpecError(initial, "EVOLVE-BLOCK", str(exc)) from None
        return text, False
    comment = _COMMENT.get(suffix.lower(), "#")
    lines = text.splitlines(keepends=True)
    head = lines[:1] if lines and lines[0].startswith("#!") else []
    body = "".join(lines[len(head) :]).rstrip("\n")
    return (
        "".join(head) + f"{comment} {START_MARKER}\n{body}\n{comment} {END_MARKER}\n",
        True,
    )


def _stages(functions: set[str], mapped: Mapped) -> tuple[list[dict[str, Any]], list[str]]:
    """OpenEvolve's cascade as declared stages (names, functions, timeouts); the evaluator
    applies the thresholds as OpenEvolve does."""
    if not mapped.cascade or "evaluate_stage1" not in functions:
        if mapped.cascade and "evaluate" in functions:
            return [], ["no evaluate_stage1: one evaluation by evaluate() (no cascade)"]
        if "evaluate" not in functions:
            return [_stage(1, mapped)], ["cascade off but no evaluate(): evaluate_stage1"]
        return [], []
    stages = [_stage(1, mapped)]
    notes = []
    for number in (2, 3):
        if STAGE_FUNCTIONS[number - 1] not in functions:
            break
        if len(mapped.thresholds) < number - 1:
            notes.append(
                f"evaluate_stage{number} is not run: cascade_thresholds has no threshold for "
                f"it (as in OpenEvolve)"
            )
            break
        stages.append(_stage(number, mapped))
    names = " > ".join(s["name"] for s in stages)
    gates = ", ".join(f"{t:g}" for t in mapped.thresholds[: len(stages) - 1])
    if len(stages) > 1:
        notes.insert(
            0,
            f"cascade {names} (thresholds {gates}; as in OpenEvolve, a program below one keeps "
            "the metrics of the stages it ran and is ranked by them)",
        )
    return stages, notes


def _stage(number: int, mapped: Mapped) -> dict[str, Any]:
    return {
        "name": f"stage{number}",
        "kwargs": {"function": f"evaluate_stage{number}"},
        "timeout_s": mapped.timeout_s,
    }


def _finite(value: float) -> float:
    """A threshold written in the spec: infinities as the largest floats (no ``inf`` literal)."""
    return value if math.isfinite(value) else math.copysign(1e308, value)


def _spec(
    name: str,
    folder: Path,
    evaluator_source: str,
    seed_file: str,
    suffix: str,
    stages: list[dict[str, Any]],
    mapped: Mapped,
    features: Features,
) -> str:
    objective = "fitness"
    options: dict[str, Any] = {
        "openevolve_dir": str(folder),
        "evaluator_file": EVALUATOR_FILE,
        "program_suffix": suffix,
        "fitness_exclude": list(
            mapped.feature_dimensions
            if mapped.feature_dimensions is not None
            else DEFAULT_DIMENSIONS
        ),
        "feature_metrics": features.metrics,
    }
    if stages:
        options["cascade_thresholds"] = [_finite(t) for t in mapped.thresholds]
    if mapped.system_prompt:
        options["prompts"] = {"system": mapped.system_prompt.replace("$", "$$")}
    description = (
        f"OpenEvolve problem {folder.name}: the program is scored by {folder / EVALUATOR_FILE}"
        f", which OpenEvolve calls with the program's file path; maximise {objective}."
    )
    if mapped.system_prompt:
        description += "\n\n" + mapped.system_prompt
    lines = [
        f'"""{description.replace(chr(92), chr(92) * 2).replace(chr(34) * 3, "")}"""',
        "",
        GENERATED.format(source=folder).rstrip(),
        "",
        f"name = {name!r}",
        'evaluator = "openevolve"',
        f"objectives = {{{objective!r}: 'maximize'}}",
        f"descriptors = {features.descriptors!r}",
        f"timeout_s = {mapped.timeout_s!r}",
        f"memory_mb = {mapped.memory_mb!r}",
        "preload = []",
        f"seed_file = {seed_file!r}",
        f"language = {_language(suffix)!r}",
        f"options = {options!r}",
        f"run_defaults = {mapped.run_defaults!r}",
    ]
    if stages:
        lines.append(f"stages = {stages!r}")
    lines += [
        f"EVALUATOR_SHA256 = {sha256(evaluator_source)!r}",
        "",
        "",
        "def evaluate(metrics):",
        '    """The OpenEvolve evaluator\'s metrics (with fitness added), as reported."""',
        "    return metrics",
        "",
    ]
    for stage in stages[:-1]:
        lines.append(f"evaluate_{stage['name']} = evaluate")
    return "\n".join(lines) + "\n"


def _language(suffix: str) -> str:
    return "python" if suffix.lower() == ".py" else suffix.lower().lstrip(".")


OPENEVOLVE = Adapter(
    name="openevolve",
    detect=detect,
    adapt=adapt,
    description="OpenEvolve folders (initial_program.*, evaluator.py, optional config.yaml)",
)
