"""What a ``native`` problem declares, read and checked once in the engine's process.

A native spec declares, besides the usual names (``name``, ``objectives``, ``seed_file``,
``language``)::

    evaluator = "native"
    language = "cpp"                 # "c", "cpp" or "rust"
    measure = "callgrind"            # "cachegrind", "mca:<cpu>", "wall", "qemu:<arch>"
    tests = [("5\\n2 4 1 3 5\\n", "3\\n")]   # (stdin, expected stdout); or def tests(): ...
    compile_flags = ["-O2"]
    measure_inputs = [...]           # optional: stdin texts measured (default: the tests')
    stages = [...]                   # optional: a cascade (see below)

``measure``, ``tests``, ``compile_flags``, ``measure_inputs`` and ``hot_functions`` are the
spec's own module-level names (the declaration schema leaves names it does not know to the
spec); each may also be given in ``options`` (``options = {"measure": "wall"}``), which wins.
Limits go in ``options`` only (a top-level ``test_timeout_s`` reads as a misspelt
``timeout_s``): ``test_timeout_s`` (10), ``output_mb`` (8), ``compile_timeout_s`` (120),
``timing_repeats`` (10) and ``timing_warmups`` (2) for ``wall``, ``threads`` (1: the
sandbox's ``OMP_NUM_THREADS``; a number, or ``"all"`` for every core this host lets the
evaluator use: a parallel problem's).
A cascade's stages (the declaration schema's ``stages``, each with an optional
``threshold``) run cheapest first, each a compile, the tests and a measure; a stage's
``kwargs`` change what it does: ``measure`` (another measure, or ``"none"``: compile and tests
only), ``sanitize`` (``"thread"``, ``"address"``, ``"undefined"`` or a list: the build is
instrumented and a sanitizer report is a failure), ``tests`` (another test set's name). Each
stage's metrics carry ``speedup_vs_seed`` / ``speedup_vs_O3`` for its own measure, so a
threshold can be relative to the seed: ``{"name": "prefilter", "kwargs": {"measure":
"mca:znver4"}, "threshold": {"metric": "speedup_vs_seed", "min": 0.8}}`` keeps a candidate
whose llvm-mca estimate is over 1/0.8 of the seed's from the real measurement.
Tests and measure inputs are computed here, in the engine's trusted process, and sent to the
runner; the expected outputs never reach a candidate's process.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evoforge.problems import PASSED, Problem, ProblemSpecError, import_spec

LANGUAGES = ("c", "cpp", "rust")
MEASURES = ("callgrind", "cachegrind", "mca:<cpu>", "wall", "qemu:<arch>", "none")
SANITIZERS = ("thread", "address", "undefined")
METRICS: dict[str, tuple[str, ...]] = {
    "callgrind": ("instructions",),
    "cachegrind": ("cycles", "instructions", "d1_misses", "ll_misses", "i1_misses"),
    "mca": ("mca_cycles", "mca_rthroughput", "mca_ipc"),
    "wall": ("wall_s", "speedup_vs_seed", "speedup_vs_O3"),
    "qemu": ("instructions",),
    "none": (),
}
"""What each measure (by its kind, before any ``:``) reports; objectives name some of them."""
_MEASURE = re.compile(r"^(callgrind|cachegrind|wall|none|mca:[A-Za-z0-9_.-]+|qemu:[a-z0-9_]+)$")


@dataclass(frozen=True)
class NativeSettings:
    """A native problem's settings, validated (see the module docstring).

    Attributes:
        language: ``c``, ``cpp`` or ``rust``.
        measure: the measure as declared (``"mca:znver4"``).
        tests: ``(stdin, expected stdout)`` pairs, all checked before measuring.
        compile_flags: the candidate's compiler flags (the seed baseline uses them too).
        measure_inputs: stdin texts measured (default: every test's input).
        hot_functions: the functions llvm-mca analyses (default: those defined in the
            EVOLVE-BLOCK, or what inlining left of them: :mod:`._hot`).
        test_timeout_s: wall-clock limit of one test run.
        output_mb: the most one run may write to stdout (more is an output flood).
        compile_timeout_s: limit of one compile.
        sanitize: the sanitizers the build is instrumented with (a cascade stage's).
        threads: ``OMP_NUM_THREADS`` of the candidate's runs (0: one per usable core).
    """

    language: str
    measure: str
    tests: tuple[tuple[str, str], ...]
    compile_flags: tuple[str, ...] = ("-O2",)
    measure_inputs: tuple[str, ...] = ()
    hot_functions: tuple[str, ...] = ()
    test_timeout_s: float = 10.0
    output_mb: int = 8
    compile_timeout_s: float = 120.0
    sanitize: tuple[str, ...] = ()
    threads: int = 1

    @property
    def thread_count(self) -> int:
        """``threads`` resolved: the host's usable cores for 0 ("all")."""
        return self.threads or len(os.sched_getaffinity(0))

    @property
    def kind(self) -> str:
        """The measure without its argument: ``mca`` for ``mca:znver4``."""
        return self.measure.split(":", 1)[0]

    @property
    def argument(self) -> str:
        """The measure's argument (``znver4`` of ``mca:znver4``), or ""."""
        return self.measure.split(":", 1)[1] if ":" in self.measure else ""

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.measure_inputs or tuple(stdin for stdin, _ in self.tests)


def read_settings(
    problem: Problem, *, tests_name: str = "tests", stage: Mapping[str, Any] | None = None
) -> NativeSettings:
    """``problem``'s native settings; ``tests_name`` names another test set (a held-out
    stage's ``kwargs["tests"]``), ``stage`` a cascade stage's ``kwargs`` (``measure``,
    ``sanitize``, ``tests``: see the module docstring).

    Raises:
        ProblemSpecError: a missing or malformed setting, named, with the fix.
    """
    module = import_spec(problem.spec_path)
    options = problem.options

    def get(name: str, default: Any = None) -> Any:
        if name in options:
            return options[name]
        value = getattr(module, name, default)
        return value() if callable(value) and name in (tests_name, "measure_inputs") else value

    path = problem.spec_path
    stage = dict(stage or {})
    if unknown_keys := sorted(set(stage) - {"measure", "sanitize", "tests"}):
        raise ProblemSpecError(
            path,
            "stages",
            f"a native stage's kwargs do not take {', '.join(unknown_keys)}; use measure, "
            "sanitize and tests",
        )
    if "tests" in stage:
        tests_name = str(stage["tests"])
    language = problem.language
    if language not in LANGUAGES:
        raise ProblemSpecError(
            path, "language", f"found {language!r}; a native problem uses one of {LANGUAGES}"
        )
    measure = stage.get("measure", get("measure", "callgrind"))
    if not isinstance(measure, str) or not _MEASURE.match(measure):
        raise ProblemSpecError(
            path, "measure", f"found {measure!r}; use one of {', '.join(MEASURES)}"
        )
    tests = _tests(path, tests_name, get(tests_name))
    flags = _strings(path, "compile_flags", get("compile_flags", list(DEFAULT_FLAGS[language])))
    inputs = _strings(path, "measure_inputs", get("measure_inputs", []))
    hot = _strings(path, "hot_functions", get("hot_functions", []))
    known = {*METRICS[measure.split(":", 1)[0]], PASSED}
    unknown = [o.name for o in problem.objectives if o.name not in known]
    if "measure" not in stage and unknown:
        raise ProblemSpecError(
            path,
            "objectives",
            f"{', '.join(unknown)} is not measured by {measure!r}; it reports "
            f"{', '.join(sorted(known))}",
        )
    return NativeSettings(
        language=language,
        measure=measure,
        tests=tests,
        compile_flags=flags,
        measure_inputs=inputs,
        hot_functions=hot,
        test_timeout_s=_positive(path, "test_timeout_s", get("test_timeout_s", 10.0)),
        output_mb=int(_positive(path, "output_mb", get("output_mb", 8))),
        compile_timeout_s=_positive(path, "compile_timeout_s", get("compile_timeout_s", 120.0)),
        sanitize=_sanitizers(path, stage.get("sanitize", ())),
        threads=_threads(path, options.get("threads", 1)),
    )


def _threads(path: Any, value: Any) -> int:
    if value == "all":
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ProblemSpecError(
            path, "options.threads", f'found {value!r}; use a number >= 1 or "all"'
        )
    return value


def _sanitizers(path: Any, value: Any) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else value
    fix = f'use one of {SANITIZERS} or a list of them, e.g. "sanitize": "thread"'
    if not isinstance(names, Sequence) or not all(n in SANITIZERS for n in names):
        raise ProblemSpecError(path, "stages", f"sanitize {value!r}: {fix}")
    if "thread" in names and "address" in names:
        raise ProblemSpecError(
            path, "stages", "sanitize: thread and address cannot share a build; use two stages"
        )
    return tuple(names)


def _tests(path: Any, name: str, value: Any) -> tuple[tuple[str, str], ...]:
    fix = f'declare {name} = [("stdin text", "expected stdout"), ...] or def {name}(): ...'
    if value is None:
        raise ProblemSpecError(path, name, f"missing; {fix}")
    if isinstance(value, Callable):  # type: ignore[arg-type]
        value = value()
    if not isinstance(value, Sequence) or isinstance(value, str) or not value:
        raise ProblemSpecError(path, name, f"found {type(value).__name__}; {fix}")
    pairs = []
    for index, pair in enumerate(value):
        ok = isinstance(pair, Sequence) and not isinstance(pair, str) and len(pair) == 2
        if not ok or not all(isinstance(x, str) for x in pair):
            raise ProblemSpecError(path, f"{name}[{index}]", f"found {pair!r:.80}; {fix}")
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


def _strings(path: Any, name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ProblemSpecError(path, name, f"found {value!r:.80}; use a list of strings")
    if not all(isinstance(x, str) for x in value):
        raise ProblemSpecError(path, name, "use a list of strings, e.g. ['-O2']")
    return tuple(value)


def _positive(path: Any, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ProblemSpecError(path, name, f"found {value!r}; use a number > 0")
    return float(value)


DEFAULT_FLAGS = {"c": ("-O2",), "cpp": ("-O2",), "rust": ("-C", "opt-level=2")}
"""``compile_flags`` when a problem declares none (rustc spells the level as a codegen option)."""


def o3_flags(flags: Sequence[str], language: str = "c") -> tuple[str, ...]:
    """``flags`` with every optimisation level replaced by the highest (the compiler-alone
    baseline: the seed as the compiler would make it fastest without a programmer): ``-O3``
    for clang, ``-C opt-level=3`` for rustc."""
    if language == "rust":
        kept: list[str] = []
        for flag in flags:  # -O, -Copt-level=N, and "-C" "opt-level=N" as two words
            if flag == "-O" or re.fullmatch(r"(-C)?opt-level=\w+", flag):
                if not flag.startswith("-") and kept and kept[-1] == "-C":
                    kept.pop()
                continue
            kept.append(flag)
        return (*kept, "-C", "opt-level=3")
    kept = [f for f in flags if not re.fullmatch(r"-O[0-3sz]?|-Ofast|-Og", f)]
    return (*kept, "-O3")
