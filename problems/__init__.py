"""Problem specs: the seed program, how candidates are scored, and the MAP-Elites descriptors.

See :func:`load_problem` for the file format. Built-in problems live in ``problems/builtin``
and are registered through the ``register_problems`` hook like any third-party problem.
"""

from problems._blocks import END_MARKER, START_MARKER, Block, BlockError, find_blocks
from problems._loader import ProblemSpecError, import_spec, load_problem
from problems._spec import Descriptor, Direction, Objective, Problem, Stage, Threshold

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
    "ProblemSpecError",
    "import_spec",
    "load_problem",
]
