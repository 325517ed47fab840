"""The built-in bank of instruction fragments that offline prompt variants are made from.

Each fragment is one distinct strategy a coding model can be pointed at; a bank variant is the
run's best variant with one of them (sometimes beside one it already had) appended to its
task instructions as a ``Focus:`` line. They name no ``$placeholder`` and hold no ``$``, so any
template they are appended to stays a valid :class:`string.Template`.
"""

from __future__ import annotations

FOCUS = "Focus: "
"""Prefix of a fragment's line in a task template (how a variant's fragments are found)."""

FRAGMENTS: tuple[str, ...] = (
    "prefer small, surgical changes: alter one thing, so its effect can be measured.",
    "try a different algorithm for the core of the computation, not a tweak of this one.",
    "tune the numeric constants (sizes, thresholds, step counts, rates) the program relies on.",
    "simplify: remove code that does not pay for itself; simpler programs evolve further.",
    "vectorise the inner loops (whole-array operations instead of per-element Python).",
    "exploit the structure of the problem (symmetry, ordering, bounds, invariants) the "
    "program ignores so far.",
    "look for what the best programs above do differently from the current one, and bring "
    "the most promising difference over.",
    "improve the worst case: find the input or configuration where the program does badly "
    "and fix that first.",
    "replace a greedy step with a short local search or a few random restarts.",
    "reuse work: cache or precompute what is computed repeatedly.",
    "make the numerics robust: guard against degenerate cases, overflow and division by zero.",
    "change the order of operations or the initial state; a better start often matters most.",
    "combine two ideas that each helped on their own into one change.",
)
"""Strategies a bank variant can add, each distinct from the others."""
