"""What the run asks the model for each candidate, and the search's state beside the islands.

:class:`Asking` plans a candidate (the island's selection, a resting parent passed over, a
failure to repair or an edit mode, the prompt context, the model, the prompt variant) and
varies a request this session already sent (:class:`RequestLedger`); :class:`SearchState`
holds the built-in descriptors, the novelty filter and the prompt variants; ``[search]``
(:class:`SearchConfig`) turns each feature on or off. Above the mutation side (prompts,
proposals), below the run's configuration and the controller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evolve.search._asking import (
        NOTHING_NEW_SHOWN as NOTHING_NEW_SHOWN,
        REDRAWS as REDRAWS,
        Asking as Asking,
        Plan as Plan,
        TransferSource as TransferSource,
    )
    from evoforge.evolve.search._config import SearchConfig as SearchConfig
    from evoforge.evolve.search._requests import (
        RequestLedger as RequestLedger,
        request_key as request_key,
    )
    from evoforge.evolve.search._resting import rests as rests
    from evoforge.evolve.search._state import SearchState as SearchState

__getattr__, __dir__, __all__ = lazy_package(__name__)
