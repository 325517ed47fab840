"""KernelBench task files as problems, unmodified.

A KernelBench task is a Python file with ``class Model(nn.Module)``, ``get_inputs()`` and
``get_init_inputs()`` (and usually module-level size constants). This adapter makes it a
problem of the ``triton`` or ``cuda`` evaluator without touching it: the generated folder
holds a byte-for-byte copy of the task (``task.py``), a seed (``seed.py``) and the
declarations (``problem.py``). A folder of task files is a batch: one problem per task, run
one after the other, reported with KernelBench's metrics (fast_p, geometric-mean speedup).

The seed, in order of preference:

1. ``seed_file`` (``--seed-file``), for one task;
2. ``seeds/<target>/<task file name>`` next to the task (how the built-in kernel suite ships
   its naive kernels);
3. written from the task: ``ModelNew`` is the task's ``Model`` under a new name, in plain
   PyTorch (correct by construction, as fast as eager), inside one EVOLVE-BLOCK, with
   ``import triton`` added for Triton.

A given seed without EVOLVE-BLOCK markers is evolvable as a whole (one block around the
file). What the evaluator does on each host (shapes shrunk for the interpreter, timing on a
GPU) is the evaluator's business: see :mod:`evoforge.evaluators.kernels.kernelbench`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from evoforge.problems import (
    END_MARKER,
    SPEC_FILENAME,
    START_MARKER,
    BlockError,
    Problem,
    ProblemSpecError,
    find_blocks,
    load_problem,
)
from evoforge.problems.adapters._registry import Adapted, Adapter, AdaptOptions
from evoforge.problems.adapters._write import GENERATED, identifier, sha256, write_folder

TARGETS = ("triton", "cuda")
DEFAULT_TARGET = "triton"
REQUIRED = ("Model", "get_inputs", "get_init_inputs")
INPUT_FUNCTIONS = ("get_inputs", "get_init_inputs", "get_inputs_small")
SEEDS_FOLDER = "seeds"
TIMEOUT_S = 120  # one candidate in the Triton interpreter (a GPU run has its own default)
MEMORY_MB = 4096  # torch and triton loaded, plus the shrunk inputs


def is_task_source(source: str) -> bool:
    """Whether ``source`` defines ``Model``, ``get_inputs`` and ``get_init_inputs`` at top level
    and is not a problem spec (no ``evaluate``)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    names = {
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    }
    return set(REQUIRED) <= names and "evaluate" not in names


def is_task_file(path: Path) -> bool:
    if path.suffix != ".py" or not path.is_file() or path.name == SPEC_FILENAME:
        return False
    try:
        return is_task_source(path.read_text())
    except (OSError, UnicodeDecodeError):
        return False


def task_files(folder: Path) -> list[Path]:
    """The task files directly in ``folder``, in KernelBench's order (``2_x`` before ``10_x``)."""
    found = [p for p in folder.iterdir() if is_task_file(p)]

    def key(path: Path) -> tuple[int, str]:
        number = re.match(r"\d+", path.stem)
        return (int(number.group()) if number else 1 << 30, path.name)

    return sorted(found, key=key)


def detect(path: Path) -> bool:
    if path.is_file():
        return is_task_file(path)
    if not path.is_dir() or (path / SPEC_FILENAME).exists() or (path / "evaluator.py").exists():
        return False
    return bool(task_files(path))


def adapt(path: Path, options: AdaptOptions) -> Adapted:
    """One problem per task (see the module docstring).

    Raises:
        ProblemSpecError: an unknown target, a seed file for a whole folder, a task or seed
            that does not parse, or a seed without ``ModelNew``.
    """
    target = options.target or DEFAULT_TARGET
    if target not in TARGETS:
        raise ProblemSpecError(
            path, "target", f"{target!r} is not a KernelBench target; use one of {TARGETS}"
        )
    notes = []
    if options.target is None:
        notes.append(f"no --target given: {DEFAULT_TARGET} (--target cuda for CUDA C++ kernels)")
    if path.is_dir():
        if options.seed_file is not None:
            raise ProblemSpecError(
                path,
                "seed_file",
                "a seed file applies to one task, not a folder; put seeds in "
                f"{SEEDS_FOLDER}/{target}/<task file name> next to the tasks",
            )
        files = task_files(path)
    else:
        files = [path]
    problems = []
    seeded = 0
    for file in files:
        problem, given = _adapt_task(file, target, options)
        problems.append(problem)
        seeded += given
    written = problems[0].spec_path.parent if len(problems) == 1 else "the evoforge cache"
    if options.folder is not None and len(problems) > 1:
        written = options.folder
    what = f"{len(problems)} KernelBench tasks" if path.is_dir() else "a KernelBench task"
    notes.insert(0, f"{path.name}: {what} for the {target} evaluator (written to {written})")
    if seeded < len(problems):
        notes.append(
            f"{len(problems) - seeded} seed(s) written from the task: ModelNew is the task's "
            "Model in plain PyTorch, to be replaced by kernels"
        )
    if seeded:
        notes.append(f"{seeded} seed(s) from given files")
    return Adapted("kernelbench", path, tuple(problems), tuple(notes), batch=path.is_dir())


def _adapt_task(file: Path, target: str, options: AdaptOptions) -> tuple[Problem, bool]:
    source = file.read_text()
    seed_path = options.seed_file
    if seed_path is None:
        conventional = file.parent / SEEDS_FOLDER / target / file.name
        seed_path = conventional if conventional.is_file() else None
    if seed_path is not None:
        seed = given_seed(seed_path)
        seed_note = f"the seed is {seed_path}"
    else:
        seed = reference_seed(source, file, target)
        seed_note = "the seed's ModelNew is the task's Model in plain PyTorch"
    name = identifier(f"{file.stem}_{target}", "kb")
    spec = _spec(name, file, source, target, seed_note)
    folder = write_folder(
        name, {SPEC_FILENAME: spec, "task.py": source, "seed.py": seed}, options.folder
    )
    return load_problem(folder), seed_path is not None


def given_seed(path: Path) -> str:
    """A seed file's text; one EVOLVE-BLOCK around all of it when it has no markers.

    Raises:
        ProblemSpecError: it does not exist, does not define ``ModelNew``, or its markers are
            broken.
    """
    if not path.is_file():
        raise ProblemSpecError(path, "seed_file", "does not exist; give a ModelNew program")
    text = path.read_text()
    if not re.search(r"^class\s+ModelNew\b", text, re.MULTILINE):
        raise ProblemSpecError(
            path,
            "seed_file",
            "defines no class ModelNew; a KernelBench solution defines ModelNew with the "
            "task's constructor arguments",
        )
    if START_MARKER not in text and END_MARKER not in text:
        return f"# {START_MARKER}\n{text.rstrip()}\n# {END_MARKER}\n"
    try:
        find_blocks(text, origin=str(path))
    except BlockError as exc:
        raise ProblemSpecError(path, "seed_file", str(exc)) from None
    return text


def reference_seed(source: str, origin: Path, target: str) -> str:
    """A correct seed: the task without its input functions, ``Model`` renamed ``ModelNew``
    inside one EVOLVE-BLOCK, ``import triton`` added for the Triton target."""
    tree = ast.parse(source, filename=str(origin))
    lines = source.splitlines(keepends=True)
    keep = [True] * len(lines)
    model = None
    last_import = 0
    for node in tree.body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        end = node.end_lineno or node.lineno
        if isinstance(node, ast.Import | ast.ImportFrom):
            last_import = end
        elif isinstance(node, ast.FunctionDef) and node.name in INPUT_FUNCTIONS:
            keep[start - 1 : end] = [False] * (end - start + 1)
        elif isinstance(node, ast.ClassDef) and node.name == "Model":
            model = (start, end)
    assert model is not None  # detect() checked
    start, end = model
    renamed = re.sub(r"\bModel\b", "ModelNew", "".join(lines[start - 1 : end]))
    block = (
        f"# {START_MARKER}\n"
        "# ModelNew must return what the task's Model returns, faster, with the same\n"
        f"# constructor arguments: {_advice(target)}\n"
        f"{renamed.rstrip()}\n"
        f"# {END_MARKER}\n"
    )
    out = [GENERATED.format(source=f"KernelBench task {origin.name}")]
    for number, line in enumerate(lines, start=1):
        if number == start:
            out.append(block)
        if start <= number <= end or not keep[number - 1]:
            continue
        out.append(line)
        if number == last_import and target == "triton" and "import triton" not in source:
            out.append("import triton\nimport triton.language as tl  # noqa: F401\n")
    if last_import == 0 and target == "triton" and "import triton" not in source:
        out.insert(1, "import triton\nimport triton.language as tl  # noqa: F401\n")
    return re.sub(r"\n{3,}", "\n\n\n", "".join(out))


def _advice(target: str) -> str:
    if target == "triton":
        return "write @triton.jit kernels here and\n# launch them from forward()."
    return "build CUDA kernels with torch.utils.cpp_extension.load_inline\n# and call them."


def _spec(name: str, file: Path, source: str, target: str, seed_note: str) -> str:
    inputs = _input_functions(source)
    description = (
        f"KernelBench task {file.stem} ({target}): write ModelNew, with the constructor "
        f"arguments of the task's Model, returning the same outputs faster. {seed_note}. "
        "The inputs it is called with:\n\n" + inputs
    )
    return (
        f'"""{_docstring(description)}"""\n\n'
        + GENERATED.format(source=file)
        + "\n"
        + f"name = {name!r}\n"
        + f"evaluator = {target!r}\n"
        + 'objectives = {"speedup_vs_eager": "maximize", "speedup_vs_compile": "maximize"}\n'
        + f"timeout_s = {TIMEOUT_S}\n"
        + f"memory_mb = {MEMORY_MB}\n"
        + "preload = []\n"
        + 'seed_file = "seed.py"\n'
        + 'options = {"task_file": "task.py"}\n'
        + f"TASK_FILE = {str(file)!r}\n"
        + f"TASK_SHA256 = {sha256(source)!r}\n"
        + "\n\n"
        + "def evaluate(metrics):\n"
        + '    """The evaluator\'s measurements are the metrics (correctness, and timing on a '
        + 'GPU)."""\n'
        + "    return metrics\n"
    )


def _input_functions(source: str) -> str:
    """The source of the task's input functions (and the constants they use), for the prompt."""
    tree = ast.parse(source)
    parts = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in INPUT_FUNCTIONS:
            parts.append(ast.get_source_segment(source, node) or "")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            parts.append(ast.get_source_segment(source, node) or "")
    return "\n".join(p for p in parts if p)


def _docstring(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


KERNELBENCH = Adapter(
    name="kernelbench",
    detect=detect,
    adapt=adapt,
    description="KernelBench task files (class Model, get_inputs, get_init_inputs), or a "
    "folder of them as a batch",
    targets=TARGETS,
)
