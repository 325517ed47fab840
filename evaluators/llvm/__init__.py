"""The ``llvm`` evaluator: evolved Python policies drive a real LLVM 19, contained.

- :class:`LlvmEvaluator`: the evaluator plugin (tasks ``inlining``, ``regalloc_priority``,
  ``code_layout``);
- corpora of real C code fetched once from PyPI sdists into a cache (:func:`setup_corpora`,
  :func:`corpus_ready`, :data:`LIBRARIES`, :data:`CORPORA`);
- :class:`Channel`: the host side of LLVM's interactive model-runner protocol;
- ``python -m evoforge.evaluators.llvm``: the trusted runner of one stage.
"""

from evoforge.evaluators.llvm._channel import Channel, ChannelClosed, Spec
from evoforge.evaluators.llvm._corpus import (
    CORPORA,
    LIBRARIES,
    Library,
    cache_dir,
    corpus,
    ready as corpus_ready,
    setup as setup_corpora,
)
from evoforge.evaluators.llvm._elf import text_bytes
from evoforge.evaluators.llvm._evaluator import TASKS, LlvmEvaluator
from evoforge.evaluators.llvm._layout import check_order, ext_tsp, parse_bolt
from evoforge.evaluators.llvm._profile import apply_layout, load_profile, prepare_profile
from evoforge.evaluators.llvm._runner import measure_stock
from evoforge.evaluators.llvm._tools import BOLT_RUNTIME, INSTALL, REQUIRES, missing_tools, tool

__all__ = [
    # the evaluator
    "TASKS",
    "LlvmEvaluator",
    "measure_stock",
    # code layout
    "apply_layout",
    "check_order",
    "ext_tsp",
    "load_profile",
    "parse_bolt",
    "prepare_profile",
    # corpora
    "CORPORA",
    "LIBRARIES",
    "Library",
    "cache_dir",
    "corpus",
    "corpus_ready",
    "setup_corpora",
    # LLVM
    "BOLT_RUNTIME",
    "INSTALL",
    "REQUIRES",
    "Channel",
    "ChannelClosed",
    "Spec",
    "missing_tools",
    "text_bytes",
    "tool",
]
