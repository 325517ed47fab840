"""Evolve: the conductor of a run.

Configuration, the asynchronous steady-state controller, prompts, the model client (litellm;
the offline mutation model included), edit parsing and application, and the CLI. Mining a run
(statistics, comparison, export) is :mod:`evoforge.evolve.mining`; the dashboard
(``evoforge ui``) is :mod:`evoforge.evolve.dashboard`.

Names are imported on first use (:mod:`evoforge.base.lazy`): the ``evoforge`` command and the
proposal workers load only the modules they use, not the controller, the evaluators or litellm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_exports

if TYPE_CHECKING:
    from evoforge.evolve._config import (
        OFFLINE_MODEL,
        ConfigError,
        RunConfig,
        layered,
        load_config_file,
    )
    from evoforge.evolve._controller import Controller, SeedError
    from evoforge.evolve._host_fit import measurable_problem
    from evoforge.evolve._progress import LiveProgress
    from evoforge.evolve._resolve import Resolved, resolve
    from evoforge.evolve._search import SearchConfig
    from evoforge.evolve._session import (
        SessionOptions,
        StopEvent,
        resolve_problem,
        resume_run,
        start_run,
    )
    from evoforge.evolve._snapshot import Progress, SessionReport, Snapshot
    from evoforge.evolve._syntax import check_syntax
    from evoforge.evolve.edits import AppliedEdit, EditError, apply_edit
    from evoforge.evolve.models import Completion, ModelError, complete
    from evoforge.evolve.prompts import build_messages

# name -> the module that defines it
_EXPORTS = {
    "OFFLINE_MODEL": "evoforge.evolve._config",
    "ConfigError": "evoforge.evolve._config",
    "RunConfig": "evoforge.evolve._config",
    "layered": "evoforge.evolve._config",
    "load_config_file": "evoforge.evolve._config",
    "Controller": "evoforge.evolve._controller",
    "SeedError": "evoforge.evolve._controller",
    "measurable_problem": "evoforge.evolve._host_fit",
    "LiveProgress": "evoforge.evolve._progress",
    "Resolved": "evoforge.evolve._resolve",
    "resolve": "evoforge.evolve._resolve",
    "SearchConfig": "evoforge.evolve._search",
    "SessionOptions": "evoforge.evolve._session",
    "StopEvent": "evoforge.evolve._session",
    "resolve_problem": "evoforge.evolve._session",
    "resume_run": "evoforge.evolve._session",
    "start_run": "evoforge.evolve._session",
    "Progress": "evoforge.evolve._snapshot",
    "SessionReport": "evoforge.evolve._snapshot",
    "Snapshot": "evoforge.evolve._snapshot",
    "check_syntax": "evoforge.evolve._syntax",
    "AppliedEdit": "evoforge.evolve.edits",
    "EditError": "evoforge.evolve.edits",
    "apply_edit": "evoforge.evolve.edits",
    "Completion": "evoforge.evolve.models",
    "ModelError": "evoforge.evolve.models",
    "complete": "evoforge.evolve.models",
    "build_messages": "evoforge.evolve.prompts",
}

__all__ = [
    # configuration
    "OFFLINE_MODEL",
    "ConfigError",
    "RunConfig",
    "SearchConfig",
    "layered",
    "load_config_file",
    # running
    "Controller",
    "LiveProgress",
    "Progress",
    "SeedError",
    "SessionOptions",
    "SessionReport",
    "Snapshot",
    "StopEvent",
    "measurable_problem",
    "Resolved",
    "resolve",
    "resolve_problem",
    "resume_run",
    "start_run",
    # model and edits
    "AppliedEdit",
    "Completion",
    "EditError",
    "ModelError",
    "apply_edit",
    "build_messages",
    "check_syntax",
    "complete",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
