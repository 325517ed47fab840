"""Compiler caches private to one sandboxed run (candidate, reference or trusted baseline).

``torch.compile`` (inductor) and Triton keep what they compile on disk and load it back by a
key computed from the source: inductor imports ``<cache>/<xx>/<hash>.py`` as it finds it when
the file exists (``torch._inductor.codecache.write`` never rewrites it), Triton loads
``<cache>/<key>/*`` the same way. A candidate can compile the task's ``Model`` itself, learn
those keys, and leave poisoned files where the next process looks: the next candidate, or the
trusted eager/``torch.compile`` baseline every speedup is divided by. So every job points each
cache at a fresh folder of its own working directory (a new, private folder per run, removed
with it) before any compiler runs, whatever the runner inherited:

- where a cache lives is decided by environment variables that the host may set for speed
  (``TORCHINDUCTOR_CACHE_DIR``, ``TRITON_CACHE_DIR``, passed through ``sandbox_env``), by
  ``HOME`` read when ``triton`` was *imported* (the runner imports it before it forks, in the
  interpreter's case), or by ``tempfile.gettempdir()`` with the user's name: each is replaced;
- Triton's kernel override and dump folders (``TRITON_KERNEL_OVERRIDE`` loads kernels from a
  folder instead of compiling them) are switched off, and so are inductor's remote caches;
- inductor's precompiled header is switched off: with a private cache it is written once and
  never reused, and it is larger (over 64 MiB with GCC 12 on x86-64) than the sandbox's
  file-size limit, which made ``torch.compile`` fail on CPUs inside the sandbox.

Cost: a compile in every run starts cold (seconds on a GPU, tens of seconds for inductor's C++
on a CPU); the trusted baseline is measured once per evaluator and device.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

CACHE_FOLDERS = {
    "TORCHINDUCTOR_CACHE_DIR": "torchinductor",
    "TRITON_HOME": "triton-home",
    "TRITON_CACHE_DIR": "triton-home/.triton/cache",
    "TRITON_DUMP_DIR": "triton-home/.triton/dump",
    "TRITON_OVERRIDE_DIR": "triton-home/.triton/override",
    "XDG_CACHE_HOME": "xdg-cache",
    "TORCH_EXTENSIONS_DIR": "torch-extensions",
    "CUDA_CACHE_PATH": "nv-compute-cache",
    "PYTORCH_KERNEL_CACHE_PATH": "torch-kernels",
}
"""Each cache's environment variable and its folder under the run's own ``.caches``."""
SWITCHED_OFF = {
    "TRITON_KERNEL_OVERRIDE": "0",
    "TRITON_KERNEL_DUMP": "0",
    "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_BUNDLED_AUTOTUNE_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS": "0",
}
"""Variables set so that nothing is loaded from a shared or remote place."""
INDUCTOR_OFF = (
    "cpp_cache_precompile_headers",
    "fx_graph_remote_cache",
    "autotune_remote_cache",
    "bundled_autotune_remote_cache",
)
"""The same for ``torch._inductor.config`` when it was imported before (read at import)."""


def private_caches(root: str | os.PathLike[str]) -> dict[str, str]:
    """Point every compiler cache at a new folder under ``root`` (the run's working
    directory); returns the variables set. Call it in the sandboxed child, before any compile.
    """
    base = Path(root, ".caches")
    chosen = {name: str(base / folder) for name, folder in CACHE_FOLDERS.items()}
    for folder in chosen.values():
        os.makedirs(folder, exist_ok=True)
    os.environ.update(chosen)
    os.environ.update(SWITCHED_OFF)
    _forget_resolved_folders()
    return {**chosen, **SWITCHED_OFF}


def _forget_resolved_folders() -> None:
    """Settings that libraries already imported (in the runner, before the fork) read from
    the environment at import time, set again from it."""
    config = sys.modules.get("torch._inductor.config")
    if config is not None:
        for name in INDUCTOR_OFF:
            setattr(config, name, False)
    knobs = sys.modules.get("triton.knobs")
    cache = getattr(knobs, "cache", None)
    if cache is not None:  # home_dir's default is HOME when triton was imported
        cache.home_dir = os.environ["TRITON_HOME"]
        cache.dir = os.environ["TRITON_CACHE_DIR"]
        cache.dump_dir = os.environ["TRITON_DUMP_DIR"]
        cache.override_dir = os.environ["TRITON_OVERRIDE_DIR"]
