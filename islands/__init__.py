"""Islands: population structure over the archive's MAP-Elites grids.

N islands, each with its own grid; parents come from one island through a selection strategy;
the best elites migrate along a ring; stagnant islands are reseeded from the best other one.
All state lives in SQLite, so islands are rebuilt exactly on resume.
"""

from evoforge.islands._islands import (
    GLOBAL,
    IslandConfig,
    Islands,
    Outcome,
    Selection,
    Strategy,
)
from evoforge.islands._selection import (
    BUILTIN_STRATEGIES,
    fitness_weighted,
    rank,
    tournament,
    uniform,
)

__all__ = [
    # model
    "GLOBAL",
    "IslandConfig",
    "Islands",
    "Outcome",
    "Selection",
    "Strategy",
    # selection
    "BUILTIN_STRATEGIES",
    "fitness_weighted",
    "rank",
    "tournament",
    "uniform",
]
