"""The ``llvm`` evaluator: evolved Python policies drive a real LLVM 19, contained.

- :class:`LlvmEvaluator`: the evaluator plugin (tasks ``inlining``, ``regalloc_priority``,
  ``code_layout``);
- corpora of real C code fetched once from PyPI sdists into a cache (:func:`setup_corpora`,
  :func:`corpus_ready`, :data:`LIBRARIES`, :data:`CORPORA`);
- :class:`Channel`: the host side of LLVM's interactive model-runner protocol;
- ``python -m evoforge.evaluators.llvm``: the trusted runner of one stage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.llvm._channel import (
        Channel as Channel,
        ChannelClosed as ChannelClosed,
        Spec as Spec,
    )
    from evoforge.evaluators.llvm._corpus import (
        CORPORA as CORPORA,
        LIBRARIES as LIBRARIES,
        Library as Library,
        cache_dir as cache_dir,
        corpus as corpus,
        corpus_ready as corpus_ready,
        setup_corpora as setup_corpora,
    )
    from evoforge.evaluators.llvm._elf import text_bytes as text_bytes
    from evoforge.evaluators.llvm._evaluator import TASKS as TASKS, LlvmEvaluator as LlvmEvaluator
    from evoforge.evaluators.llvm._layout import (
        check_order as check_order,
        ext_tsp as ext_tsp,
        parse_bolt as parse_bolt,
    )
    from evoforge.evaluators.llvm._profile import (
        apply_layout as apply_layout,
        load_profile as load_profile,
        prepare_profile as prepare_profile,
    )
    from evoforge.evaluators.llvm._runner import measure_stock as measure_stock
    from evoforge.evaluators.llvm._tools import (
        BOLT_RUNTIME as BOLT_RUNTIME,
        INSTALL as INSTALL,
        REQUIRES as REQUIRES,
        missing_tools as missing_tools,
        tool as tool,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
