"""Islands: population structure over the archive's MAP-Elites grids.

N islands, each with its own grid; parents come from one island through a selection strategy;
the best elites migrate along a ring; stagnant islands are reseeded from the best other one.
All state lives in SQLite, so islands are rebuilt exactly on resume.

A problem that declares no descriptors gets built-in ones (program size and structural
distance, :data:`BUILTIN_DESCRIPTORS`), so each island keeps many cells; a novelty filter
(:class:`NoveltyFilter`) keeps equivalent and nearly identical candidates from being
evaluated. Both rest on the program fingerprints of :func:`fingerprint`.

Names are imported on first use (:mod:`evoforge.base.lazy`), so that loading the built-in plugin
(every ``evoforge`` command does) imports no island machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_exports

if TYPE_CHECKING:
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

# name -> the module that defines it
_EXPORTS = {
    "BUILTIN_DESCRIPTORS": "evoforge.islands._descriptors",
    "BuiltinDescriptors": "evoforge.islands._descriptors",
    "with_builtin_descriptors": "evoforge.islands._descriptors",
    "GLOBAL": "evoforge.islands._islands",
    "IslandConfig": "evoforge.islands._islands",
    "Islands": "evoforge.islands._islands",
    "Outcome": "evoforge.islands._islands",
    "Selection": "evoforge.islands._islands",
    "Strategy": "evoforge.islands._islands",
    "NoveltyFilter": "evoforge.islands._novelty",
    "Verdict": "evoforge.islands._novelty",
    "BUILTIN_STRATEGIES": "evoforge.islands._selection",
    "fitness_weighted": "evoforge.islands._selection",
    "rank": "evoforge.islands._selection",
    "tournament": "evoforge.islands._selection",
    "uniform": "evoforge.islands._selection",
    "Fingerprint": "evoforge.islands._similarity",
    "ShingleCache": "evoforge.islands._similarity",
    "ast_key": "evoforge.islands._similarity",
    "code_tokens": "evoforge.islands._similarity",
    "evolving_code": "evoforge.islands._similarity",
    "fingerprint": "evoforge.islands._similarity",
    "jaccard": "evoforge.islands._similarity",
    "shingles": "evoforge.islands._similarity",
}

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
