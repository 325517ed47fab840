"""Problem specs: the seed program, how candidates are scored, and the MAP-Elites descriptors.

A problem is a folder (``problem.py`` + a seed program) or a single spec file; see
:func:`load_problem` for the format. :func:`define_problem` writes one from Python values, and
:func:`scaffold` a new folder of each kind from templates (``evoforge new``).
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

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.problems._baselines import measure_baselines as measure_baselines
    from evoforge.problems._blocks import (
        END_MARKER as END_MARKER,
        START_MARKER as START_MARKER,
        Block as Block,
        BlockError as BlockError,
        find_blocks as find_blocks,
    )
    from evoforge.problems._bundle import (
        BundleError as BundleError,
        file_sections as file_sections,
        header as header,
        header_path as header_path,
        make_bundle as make_bundle,
        split_bundle as split_bundle,
    )
    from evoforge.problems._declaration import (
        DECLARATIONS as DECLARATIONS,
        Declaration as Declaration,
        ProblemSpecError as ProblemSpecError,
    )
    from evoforge.problems._declared import DescriptorRange as DescriptorRange
    from evoforge.problems._define import (
        CACHE_ENV as CACHE_ENV,
        cache_folder as cache_folder,
        define_problem as define_problem,
        write_if_changed as write_if_changed,
    )
    from evoforge.problems._host import (
        problem_unready as problem_unready,
        setup_problem as setup_problem,
    )
    from evoforge.problems._instances import InstanceScores as InstanceScores
    from evoforge.problems._loader import (
        SPEC_FILENAME as SPEC_FILENAME,
        import_spec as import_spec,
        load_problem as load_problem,
    )
    from evoforge.problems._scaffold import (
        SCAFFOLD_KINDS as SCAFFOLD_KINDS,
        ScaffoldError as ScaffoldError,
        scaffold as scaffold,
    )
    from evoforge.problems._spec import (
        PASSED as PASSED,
        Descriptor as Descriptor,
        Direction as Direction,
        Objective as Objective,
        Problem as Problem,
    )
    from evoforge.problems._stages import Stage as Stage, Threshold as Threshold, Tuning as Tuning
    from evoforge.problems._suites import (
        KERNEL_SUITE as KERNEL_SUITE,
        examples as examples,
        suites as suites,
    )
    from evoforge.problems._versus import versus as versus

__getattr__, __dir__, __all__ = lazy_package(__name__)
