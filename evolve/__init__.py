"""Evolve: the conductor of a run.

Its subpackages are floors, each importing only the floors below it (lowest first;
``tests/packaging/test_layers.py`` checks it):

1. :mod:`~evoforge.evolve.checks` (a candidate's syntax and names) and
   :mod:`~evoforge.evolve.mining` (reading a run back: statistics, timelines, failures and
   their fixes, what the calls bought, export: what the archive's rows and counts mean);
2. the mutation side's leaves: :mod:`~evoforge.evolve.models` (the model client, litellm),
   :mod:`~evoforge.evolve.prompts`, :mod:`~evoforge.evolve.edits`;
3. :mod:`~evoforge.evolve.offline` (the offline mutation model) and
   :mod:`~evoforge.evolve.proposals` (a model call made into a child, in worker processes);
4. :mod:`~evoforge.evolve.search` (what each candidate asks the model);
5. :mod:`~evoforge.evolve.config` (a run's configuration);
6. :mod:`~evoforge.evolve.run` (session, controller, recorder, endings, suites);
7. :mod:`~evoforge.evolve.dashboard` (``evoforge ui``), then :mod:`~evoforge.evolve.cli`.

This package's names are the public API of all of them.

Names are imported on first use (:mod:`evoforge.base.lazy`): the ``evoforge`` command and the
proposal workers load only the modules they use, not the controller, the evaluators or litellm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evolve.checks import check_syntax as check_syntax
    from evoforge.evolve.config import (
        OFFLINE_MODEL as OFFLINE_MODEL,
        ConfigError as ConfigError,
        RunConfig as RunConfig,
        layered as layered,
        load_config_file as load_config_file,
    )
    from evoforge.evolve.edits import (
        AppliedEdit as AppliedEdit,
        EditError as EditError,
        apply_edit as apply_edit,
    )
    from evoforge.evolve.models import (
        Completion as Completion,
        ModelError as ModelError,
        complete as complete,
    )
    from evoforge.evolve.prompts import build_messages as build_messages
    from evoforge.evolve.run import (
        Controller as Controller,
        LiveProgress as LiveProgress,
        Progress as Progress,
        Resolved as Resolved,
        SeedError as SeedError,
        SessionOptions as SessionOptions,
        SessionReport as SessionReport,
        Snapshot as Snapshot,
        StopEvent as StopEvent,
        measurable_problem as measurable_problem,
        resolve as resolve,
        resolve_problem as resolve_problem,
        resume_run as resume_run,
        start_run as start_run,
    )
    from evoforge.evolve.search import SearchConfig as SearchConfig

__getattr__, __dir__, __all__ = lazy_package(__name__)
