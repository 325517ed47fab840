"""Fixtures the run tests share."""

from __future__ import annotations

import pytest

from evoforge.plugins import pm
from tests.evolve import scripted_models


@pytest.fixture
def scripted():
    """Register the scripted model plugin for one test; its ``SCRIPTS`` to fill."""
    pm.register(scripted_models, "scripted-models")
    scripted_models._cursors.clear()
    yield scripted_models.SCRIPTS
    pm.unregister(name="scripted-models")
    scripted_models.SCRIPTS.clear()
