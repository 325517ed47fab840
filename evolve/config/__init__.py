"""A run's configuration: ``RunConfig`` (``evoforge.toml``, ``--config``, the Python API), its
sections' settings (models, prompts, islands, search, retries) and how layers of it merge.
Above the parts it configures, below the run that reads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evolve.config._run import (
        OFFLINE_MODEL as OFFLINE_MODEL,
        ConfigError as ConfigError,
        RunConfig as RunConfig,
        layered as layered,
        load_config_file as load_config_file,
    )
    from evoforge.evolve.config._suite import (
        Allocation as Allocation,
        SuiteConfig as SuiteConfig,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
