"""Kernel tuning knobs for the offline model: a literal that sets a block size, a warp or
stage count, a tile or a thread count moves by a factor of two, never by a few percent.

Triton needs ``tl.arange`` bounds (``BLOCK_SIZE``, ``BLOCK_M``, ...) to be powers of two, and
``num_warps`` is one; CUDA block sizes, ``__launch_bounds__`` and unroll factors are fastest at
multiples of the warp (32). The generic integer move (``1024 -> 1093``) gives a kernel that does
not compile or is slower for no reason, so these literals get doubled or halved instead: the
moves that find a GPU speedup over a naive seed (larger blocks, more warps, more pipeline
stages, other tiles of ``tl.dot``).

A literal is a knob when the name it is bound to says so: a keyword argument
(``num_warps=4``, ``BLOCK_SIZE=1024``), an assignment (``BLOCK_M = 64``), a C declaration
(``const int threads = 256``), or an argument of a call such as ``dim3(...)``
(``__launch_bounds__(256)`` offers no site: tree-sitter's C++ grammar does not parse it).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import tree_sitter

KNOB_NAME = re.compile(
    r"block|tile|warps|stages|threads|group_size|split_k|unroll|launch_bounds|dim3", re.I
)
"""Names (of a variable, keyword, macro or call) whose integer is a kernel tuning knob."""
_BINDINGS = {
    "keyword_argument": "name",  # Python: f(num_warps=4)
    "assignment": "left",  # Python: BLOCK = 64
    "init_declarator": "declarator",  # C: const int threads = 256;
}


def knob_name(node: tree_sitter.Node) -> str | None:
    """The knob's name when the integer literal ``node`` is a kernel tuning knob, else None."""
    parent = node.parent
    if parent is None:
        return None
    field = _BINDINGS.get(parent.type)
    if field is not None:
        named = parent.child_by_field_name(field)
        text = named.text.decode(errors="replace") if named is not None and named.text else ""
    elif parent.type == "argument_list" and parent.parent is not None:
        call = parent.parent.child_by_field_name("function")
        text = call.text.decode(errors="replace") if call is not None and call.text else ""
    else:
        return None
    return text if KNOB_NAME.search(text) else None


def is_power_of_two(value: int) -> bool:
    return value >= 1 and value & (value - 1) == 0


def step_knob(value: int, rng: np.random.Generator) -> int:
    """``value`` doubled or halved (never below 1; 1 only doubles)."""
    if value <= 1 or rng.random() < 0.5:
        return value * 2
    return value // 2
