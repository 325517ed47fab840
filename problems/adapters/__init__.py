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

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.problems.adapters._kernelbench import (
        KERNELBENCH as KERNELBENCH,
        is_task_source as is_task_source,
    )
    from evoforge.problems.adapters._openevolve import OPENEVOLVE as OPENEVOLVE
    from evoforge.problems.adapters._openevolve_features import (
        feature_metrics as feature_metrics,
    )
    from evoforge.problems.adapters._registry import (
        Adapted as Adapted,
        Adapter as Adapter,
        AdaptOptions as AdaptOptions,
        adapt as adapt,
        problem_adapters as problem_adapters,
    )
    from evoforge.problems.adapters._repository import (
        REPOSITORY as REPOSITORY,
        RepositoryConfig as RepositoryConfig,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
