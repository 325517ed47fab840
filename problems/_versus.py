"""A result beside its baselines, as ratios (what ``evoforge top`` and a run's summary print).

Apart from :mod:`evoforge.problems._baselines`, which validates and measures baselines
(pydantic, the spec loader), so that reading ratios costs no imports.
"""

from __future__ import annotations


def versus(
    objectives: dict[str, float], baselines: dict[str, dict[str, float]]
) -> list[tuple[str, str]]:
    """``(label, "text_bytes 0.974×")`` for each baseline sharing objectives with a result.

    The ratio is the result's value over the baseline's, in the objective's own direction: for
    a minimised objective, below 1 is better.
    """
    lines = []
    for label, values in baselines.items():
        ratios = [
            f"{name} {objectives[name] / reference:.4g}×"
            for name, reference in values.items()
            if name in objectives and reference
        ]
        if ratios:
            lines.append((label, ", ".join(ratios)))
    return lines
