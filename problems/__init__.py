"""Problem specs: the seed program, how candidates are scored, and the MAP-Elites descriptors.

A problem is a folder (``problem.py`` + a seed program) or a single spec file; see
:func:`load_problem` for the format. :func:`define_problem` writes one from Python values.
Built-in problems live in ``problems/builtin`` and are registered through the
``register_problems`` hook like any third-party problem. Other formats (KernelBench task files,
OpenEvolve folders, repositories with an ``evoforge.toml``) run unmodified through
:mod:`evoforge.problems.adapters`; a repository's files evolve as one bundle
(:func:`make_bundle`, :func:`split_bundle`).

Names are imported on first use (:mod:`evoforge.base.lazy`): the archive and the ``evoforge``
command use the problem model (:class:`Problem`, :class:`Direction`) without pydantic, which
the loader, the declarations and the models of a problem's parts (:class:`Stage`,
:class:`Threshold`, :class:`Tuning`: declared and read as the same objects) bring in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_exports

if TYPE_CHECKING:
    from evoforge.problems._baselines import measure_baselines
    from evoforge.problems._blocks import END_MARKER, START_MARKER, Block, BlockError, find_blocks
    from evoforge.problems._bundle import (
        BundleError,
        file_sections,
        header,
        header_path,
        make_bundle,
        split_bundle,
    )
    from evoforge.problems._declaration import DECLARATIONS, Declaration, ProblemSpecError
    from evoforge.problems._declared import DescriptorRange
    from evoforge.problems._define import CACHE_ENV, cache_folder, define_problem, write_if_changed
    from evoforge.problems._host import problem_unready, setup_problem
    from evoforge.problems._loader import SPEC_FILENAME, import_spec, load_problem
    from evoforge.problems._spec import PASSED, Descriptor, Direction, Objective, Problem
    from evoforge.problems._stages import Stage, Threshold, Tuning
    from evoforge.problems._suites import KERNEL_SUITE, examples, suites
    from evoforge.problems._versus import versus

# name -> the module that defines it
_EXPORTS = {
    "measure_baselines": "evoforge.problems._baselines",
    "versus": "evoforge.problems._versus",
    "END_MARKER": "evoforge.problems._blocks",
    "START_MARKER": "evoforge.problems._blocks",
    "Block": "evoforge.problems._blocks",
    "BlockError": "evoforge.problems._blocks",
    "find_blocks": "evoforge.problems._blocks",
    "BundleError": "evoforge.problems._bundle",
    "file_sections": "evoforge.problems._bundle",
    "header": "evoforge.problems._bundle",
    "header_path": "evoforge.problems._bundle",
    "make_bundle": "evoforge.problems._bundle",
    "split_bundle": "evoforge.problems._bundle",
    "DECLARATIONS": "evoforge.problems._declaration",
    "Declaration": "evoforge.problems._declaration",
    "ProblemSpecError": "evoforge.problems._declaration",
    "DescriptorRange": "evoforge.problems._declared",
    "CACHE_ENV": "evoforge.problems._define",
    "cache_folder": "evoforge.problems._define",
    "define_problem": "evoforge.problems._define",
    "write_if_changed": "evoforge.problems._define",
    "problem_unready": "evoforge.problems._host",
    "setup_problem": "evoforge.problems._host",
    "SPEC_FILENAME": "evoforge.problems._loader",
    "import_spec": "evoforge.problems._loader",
    "load_problem": "evoforge.problems._loader",
    "PASSED": "evoforge.problems._spec",
    "Descriptor": "evoforge.problems._spec",
    "Direction": "evoforge.problems._spec",
    "Objective": "evoforge.problems._spec",
    "Problem": "evoforge.problems._spec",
    "Stage": "evoforge.problems._stages",
    "Threshold": "evoforge.problems._stages",
    "Tuning": "evoforge.problems._stages",
    "KERNEL_SUITE": "evoforge.problems._suites",
    "suites": "evoforge.problems._suites",
    "examples": "evoforge.problems._suites",
}

__all__ = [
    # declaration
    "Descriptor",
    "DescriptorRange",
    "Direction",
    "Objective",
    "PASSED",
    "Problem",
    # cascade
    "Stage",
    "Threshold",
    # knob tuning
    "Tuning",
    # suites: sets of problems run as one batch
    "KERNEL_SUITE",
    "suites",
    # built-in folders in another format, run by name
    "examples",
    # baselines, reported beside results
    "measure_baselines",
    "versus",
    # EVOLVE-BLOCK regions
    "END_MARKER",
    "START_MARKER",
    "Block",
    "BlockError",
    "find_blocks",
    # repository bundles: several files as one program
    "BundleError",
    "file_sections",
    "header",
    "header_path",
    "make_bundle",
    "split_bundle",
    # host readiness and one-time set-up
    "problem_unready",
    "setup_problem",
    # loading and defining
    "CACHE_ENV",
    "DECLARATIONS",
    "SPEC_FILENAME",
    "Declaration",
    "ProblemSpecError",
    "define_problem",
    "import_spec",
    "load_problem",
    # generated problem folders (define_problem's, the adapters')
    "cache_folder",
    "write_if_changed",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
