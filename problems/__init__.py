"""Problem specs: the seed program, how candidates are scored, and the MAP-Elites descriptors.

A problem is a folder (``problem.py`` + a seed program) or a single spec file; see
:func:`load_problem` for the format. :func:`define_problem` writes one from Python values.
Built-in problems live in ``problems/builtin`` and are registered through the
``register_problems`` hook like any third-party problem. Other formats (KernelBench task files,
OpenEvolve folders) run unmodified through :mod:`evoforge.problems.adapters`.
"""

from evoforge.problems._baselines import measure_baselines, versus
from evoforge.problems._blocks import END_MARKER, START_MARKER, Block, BlockError, find_blocks
from evoforge.problems._declaration import DECLARATIONS, Declaration, ProblemSpecError
from evoforge.problems._define import CACHE_ENV, define_problem
from evoforge.problems._host import problem_unready, setup_problem
from evoforge.problems._loader import SPEC_FILENAME, import_spec, load_problem
from evoforge.problems._spec import (
    PASSED,
    Descriptor,
    Direction,
    Objective,
    Problem,
    Stage,
    Threshold,
    Tuning,
)
from evoforge.problems._suites import KERNEL_SUITE, suites

__all__ = [
    # declaration
    "Descriptor",
    "Direction",
    "Objective",
    "PASSED",
    "Problem",
    # cascade
    "Stage",
    "Threshold",
    # knob tuning
    "Tuning",
    # suites: sets of problems run as one batch
    "KERNEL_SUITE",
    "suites",
    # baselines, reported beside results
    "measure_baselines",
    "versus",
    # EVOLVE-BLOCK regions
    "END_MARKER",
    "START_MARKER",
    "Block",
    "BlockError",
    "find_blocks",
    # host readiness and one-time set-up
    "problem_unready",
    "setup_problem",
    # loading and defining
    "CACHE_ENV",
    "DECLARATIONS",
    "SPEC_FILENAME",
    "Declaration",
    "ProblemSpecError",
    "define_problem",
    "import_spec",
    "load_problem",
]
