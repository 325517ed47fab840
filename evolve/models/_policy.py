"""The ensemble's policies, light, so that the ``evoforge run`` command's ``--ensemble``
choices do not import the model pool (numpy, pydantic)."""

from __future__ import annotations

from typing import Literal, get_args

Policy = Literal["weighted", "ucb1"]
"""How a call picks its model: by weight, or UCB1 on improvement per unit cost."""
POLICIES: tuple[str, ...] = get_args(Policy)
