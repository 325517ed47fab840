"""Adapters: problems in other people's formats, run unmodified.

:func:`adapt` turns a path that is not an evoforge problem spec into problems, through the
first registered adapter that recognises it. Built in:

- ``kernelbench``: a KernelBench task file (``class Model``, ``get_inputs()``,
  ``get_init_inputs()``), or a folder of them (a batch), for the ``triton`` or ``cuda``
  evaluator (:mod:`evoforge.problems.adapters._kernelbench`);
- ``openevolve``: an OpenEvolve folder (``initial_program.*``, ``evaluator.py``, optional
  ``config.yaml``), for the ``openevolve`` evaluator
  (:mod:`evoforge.problems.adapters._openevolve`);
- ``repository``: a folder with an ``evoforge.toml`` (files to evolve, a check and a measure
  command), for the ``repo`` evaluator (:mod:`evoforge.problems.adapters._repository`).

A plugin adds a format with the ``register_problem_adapters`` hook::

    @hookimpl
    def register_problem_adapters(register):
        register(Adapter("myformat", detect=looks_like_mine, adapt=make_problems))
"""

from evoforge.problems.adapters._kernelbench import KERNELBENCH, is_task_source
from evoforge.problems.adapters._openevolve import OPENEVOLVE
from evoforge.problems.adapters._registry import (
    Adapted,
    Adapter,
    AdaptOptions,
    adapt,
    problem_adapters,
)
from evoforge.problems.adapters._repository import REPOSITORY, RepositoryConfig

__all__ = [
    # the registry
    "AdaptOptions",
    "Adapted",
    "Adapter",
    "adapt",
    "problem_adapters",
    # built-in adapters
    "KERNELBENCH",
    "OPENEVOLVE",
    "REPOSITORY",
    "RepositoryConfig",
    "is_task_source",
]
