"""Problem specs: the seed program, how candidates are scored, and the MAP-Elites descriptors.

See :func:`load_problem` for the file format. Built-in problems live in ``problems/builtin``
and are registered through the ``register_problems`` hook like any third-party problem.
"""

from evoforge.problems._blocks import END_MARKER, START_MARKER, Block, BlockError, find_blocks
from evoforge.problems._loader import SPEC_FILENAME, ProblemSpecError, import_spec, load_problem
from evoforge.problems._spec import Descriptor, Direction, Objective, Problem, Stage, Threshold

__all__ = [
    # declaration
    "Descriptor",
    "Direction",
    "Objective",
    "Problem",
    # cascade
    "Stage",
    "Threshold",
    # EVOLVE-BLOCK regions
    "END_MARKER",
    "START_MARKER",
    "Block",
    "BlockError",
    "find_blocks",
    # loading
    "SPEC_FILENAME",
    "ProblemSpecError",
    "import_spec",
    "load_problem",
]
