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

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.islands._descriptors import (
        BUILTIN_DESCRIPTORS as BUILTIN_DESCRIPTORS,
        BuiltinDescriptors as BuiltinDescriptors,
        SeenRanges as SeenRanges,
        with_builtin_descriptors as with_builtin_descriptors,
    )
    from evoforge.islands._islands import (
        GLOBAL as GLOBAL,
        IslandConfig as IslandConfig,
        Islands as Islands,
        Outcome as Outcome,
        Selection as Selection,
        Strategy as Strategy,
        per_instance as per_instance,
    )
    from evoforge.islands._novelty import NoveltyFilter as NoveltyFilter, Verdict as Verdict
    from evoforge.islands._selection import (
        BUILTIN_STRATEGIES as BUILTIN_STRATEGIES,
        fitness_weighted as fitness_weighted,
        pareto_instances as pareto_instances,
        rank as rank,
        tournament as tournament,
        uniform as uniform,
    )
    from evoforge.islands._similarity import (
        Fingerprint as Fingerprint,
        ShingleCache as ShingleCache,
        ast_key as ast_key,
        code_tokens as code_tokens,
        evolving_code as evolving_code,
        fingerprint as fingerprint,
        jaccard as jaccard,
        shingles as shingles,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
