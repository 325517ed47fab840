"""Built-in suites: named sets of problems that run as one batch.

``evoforge run kernel_suite --target triton`` runs every task of the kernel suite (a folder of
KernelBench-format task files, adapted like any other: see
:mod:`evoforge.problems.adapters`) and reports KernelBench's metrics; ``pallas_suite`` is the
same operations as Pallas kernels (registered problems of the ``tpu`` evaluator); ``pie_suite``
is six PIE-style C++ programs (slow but correct seeds, registered problems of the ``native``
evaluator, measured by callgrind).

Examples (:func:`examples`) are the other built-in folders that hold no ``problem.py``: a
format an adapter runs (``repo_example``, a repository with an ``evoforge.toml``), each run by
its name like a registered problem.
"""

from __future__ import annotations

from pathlib import Path

BUILTIN_DIR = Path(__file__).parent / "builtin"
KERNEL_SUITE = BUILTIN_DIR / "kernel_suite"

SUITES: dict[str, Path | tuple[str, ...]] = {
    "kernel_suite": KERNEL_SUITE,
    "pallas_suite": (
        "pallas_gelu",
        "pallas_softmax",
        "pallas_layernorm",
        "pallas_rmsnorm",
        "pallas_matmul",
        "pallas_matmul_bias_relu",
        "pallas_attention",
        "pallas_transpose",
    ),
    "pie_suite": (
        "pie_inversions",
        "pie_lis",
        "pie_shortest_paths",
        "pie_sieve",
        "pie_substring",
        "pie_knapsack",
    ),
}
"""Suite name -> a folder of KernelBench task files, or the names of registered problems."""


def suites() -> dict[str, Path | tuple[str, ...]]:
    """The built-in suites (see :data:`SUITES`)."""
    return dict(SUITES)


def examples() -> dict[str, Path]:
    """The built-in folders in another format (run through an adapter) by name: every folder
    of ``builtin/`` without a ``problem.py`` that is not a suite's (``repo_example``)."""
    return {
        folder.name: folder
        for folder in sorted(BUILTIN_DIR.iterdir())
        if folder.is_dir()
        and not (folder / "problem.py").is_file()
        and folder not in SUITES.values()
        and not folder.name.startswith(("_", "."))
    }
