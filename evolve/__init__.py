"""Evolve: the conductor of a run.

Configuration, the asynchronous steady-state controller, prompts, the model client (litellm;
the offline mutation model included), edit parsing and application, and the CLI. Mining a run
(statistics, comparison, export) is :mod:`evoforge.evolve.mining`; the dashboard
(``evoforge ui``) is :mod:`evoforge.evolve.dashboard`.
"""

from evoforge.evolve._config import (
    OFFLINE_MODEL,
    ConfigError,
    RunConfig,
    layered,
    load_config_file,
)
from evoforge.evolve._controller import Controller, SeedError
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
