"""Hook specifications, grouped by the phase of the evolution loop they serve.

Hooks that contribute things are ``register_*`` and take a ``register`` callback; the plugin
manager owns de-duplication and naming. Hooks that observe are called for every plugin and
their return values are ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import click

    from evoforge.archive import Program
    from evoforge.evaluators import Evaluator
    from evoforge.problems.adapters import Adapter

PROJECT = "evoforge"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# --- Set-up: what exists -----------------------------------------------------------------------


@hookspec
def register_evaluators(register: Callable[[type[Evaluator]], None]) -> None:
    """Contribute evaluator classes: what runs and scores candidates, on which device.

    The contract of an :class:`evoforge.evaluators.Evaluator` subclass (checked at registration
    where it can be: a class, a subclass, a ``name``, ``evaluate`` implemented, ``targets``):

    - ``name`` (class attribute, required): what a problem's ``evaluator = "..."`` refers to;
      unique across plugins (two plugins registering different classes under one name is a
      :class:`~evoforge.plugins.PluginError` naming both).
    - ``targets`` (class attribute): the device kinds it serves, e.g. ``("cpu",)``,
      ``("cuda",)``, ``("tpu",)``; shown by ``evoforge plugins``.
    - ``availability()`` (classmethod): an :class:`evoforge.evaluators.Availability` saying
      whether it can run on this host and, if not, why (``"unavailable: no CUDA device"``).
      Cheap, no side effects, never raises; a run refuses to start with an unavailable
      evaluator.
    - ``unmeasurable(problem)`` (classmethod): the problem's objectives it cannot measure on
      this host, each with why (e.g. kernel timings without a GPU); the run then ranks by
      the first objective it can measure, and says so.
    - ``__init__(problem, *, workers)``, ``await start()``, ``await close()``: lifecycle; up
      to ``workers`` ``evaluate`` calls run at once.
    - ``await evaluate(source)``: runs the candidate in a sandbox (see
      :mod:`evoforge.evaluators.sandbox`) and returns an
      :class:`evoforge.evaluators.EvalResult`: a typed ``status`` (never an exception for a bad
      candidate), ``metrics`` (what the problem's scoring returned), ``objectives`` and
      ``descriptors`` (the declared subsets, as floats, only when ``ok``;
      :func:`evoforge.evaluators.classify_metrics` checks them), ``artifacts`` (short texts for the
      next prompt: error, traceback, failing input), ``timings`` (seconds) and ``device`` (the
      fingerprint of where it was measured). When the problem declares ``stages``,
      :func:`evoforge.evaluators.run_cascade` gives any evaluator the cascade semantics
      from a function that runs one stage.

    :param register: call with each :class:`evoforge.evaluators.Evaluator` subclass (the
        class, not an instance).
    :raises evoforge.plugins.PluginError: from ``register``, for a registration that breaks the
        contract or a name another plugin already took.
    """


@hookspec
def register_problems(register: Callable[[str, str], None]) -> None:
    """Contribute named problems.

    :param register: call with ``(name, path)``; ``path`` is a problem folder or spec file.
        ``evoforge run NAME`` then finds it.
    """


@hookspec
def register_problem_adapters(register: Callable[[Adapter], None]) -> None:
    """Contribute adapters: formats that run unmodified (a KernelBench task file, an
    OpenEvolve folder) because an adapter turns them into problem folders.

    ``evoforge run PATH`` tries the adapters, in registration order, on a path that is not a
    problem spec; the first whose ``detect(path)`` is true adapts it.

    :param register: call with an :class:`evoforge.problems.adapters.Adapter` (its ``name``
        unique across plugins).
    :raises evoforge.plugins.PluginError: from ``register``, for something that is not an
        ``Adapter`` or a name another plugin already took.
    """


@hookspec
def register_selection_strategies(register: Callable[[str, Callable[..., Any]], None]) -> None:
    """Contribute parent-selection strategies.

    A run picks one by name (``[islands] selection``); each parent pick outside the
    exploitation share (``[islands] exploitation``) calls it on one island's elites.

    :param register: call with ``(name, strategy)``; ``strategy(scores, rng, **options)``
        returns the index into ``scores`` of the chosen parent. ``scores``: the primary
        scores (bigger is better) of the island's elites in cell order (a redraw that passes
        over a resting parent leaves that one out); ``rng``: a seeded
        ``numpy.random.Generator``; ``options``: the run's ``[islands] selection_options``.
        The built-in strategies are in :mod:`evoforge.islands`.
    """


@hookspec
def register_models(register: Callable[[str, Callable[[], None]], None]) -> None:
    """Contribute model providers (mutation operators served through litellm).

    :param register: call with ``(prefix, setup)``; ``setup()`` is called once, lazily, before
        the first call to a model whose name starts with ``prefix + "/"``. It typically adds a
        ``litellm.CustomLLM`` to ``litellm.custom_provider_map``.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add commands or command groups to the ``evoforge`` CLI.

    :param cli: the top-level click group.
    """


# --- Run time: what happened ------------------------------------------------------------------


@hookspec
def program_added(run_id: str, program: Program, added: int) -> None:
    """Observe a stored attempt (after its transaction committed).

    :param run_id: the run.
    :param program: the stored program, failed attempts included.
    :param added: the :class:`evoforge.archive.AddStatus` of its global-grid offer (0 when
        not offered).
    """


@hookspec
def island_event(run_id: str, kind: str, island: int, data: dict[str, Any]) -> None:
    """Observe a migration or a reset of an island (after it committed).

    :param kind: ``"migration"`` or ``"reset"``.
    :param island: the island that received migrants, or that was reset.
    :param data: the event's details as stored in the archive.
    """


@hookspec
def run_finished(run_id: str, status: str, reason: str) -> None:
    """Observe the end of a run session (budget reached, stopped, or failed).

    :param status: the run's new status: ``finished``, ``stopped`` or ``failed``.
    :param reason: a human-readable reason.
    """
