"""Islands: population structure over the archive's MAP-Elites grids.

N islands, each with its own grid; parents come from one island through a selection strategy;
the best elites migrate along a ring; stagnant islands are reseeded from the best other one.
All state lives in SQLite, so islands are rebuilt exactly on resume.

A problem that declares no descriptors gets built-in ones (program size and structural
distance, :data:`BUILTIN_DESCRIPTORS`), so each island keeps many cells; a novelty filter
(:class:`NoveltyFilter`) keeps equivalent and nearly identical candidates from being
evaluated. Both rest on the program fingerprints of :func:`fingerprint`.
"""

from evoforge.islands._descriptors import (
    BUILTIN_DESCRIPTORS,
    BuiltinDescriptors,
    with_builtin_descriptors,
)
from evoforge.islands._islands import (
    GLOBAL,
    IslandConfig,
    Islands,
    Outcome,
    Selection,
    Strategy,
)
from evoforge.islands._novelty import NoveltyFilter, Verdict
from evoforge.islands._selection import (
    BUILTIN_STRATEGIES,
    fitness_weighted,
    rank,
    tournament,
    uniform,
)
from evoforge.islands._similarity import (
    Fingerprint,
    ShingleCache,
    ast_key,
    code_tokens,
    evolving_code,
    fingerprint,
    jaccard,
    shingles,
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
    # built-in descriptors for problems that declare none
    "BUILTIN_DESCRIPTORS",
    "BuiltinDescriptors",
    "with_builtin_descriptors",
    # novelty filter
    "NoveltyFilter",
    "Verdict",
    # program fingerprints
    "Fingerprint",
    "ShingleCache",
    "ast_key",
    "code_tokens",
    "evolving_code",
    "fingerprint",
    "jaccard",
    "shingles",
]
