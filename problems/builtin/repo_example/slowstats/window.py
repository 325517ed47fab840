"""Rolling statistics: one value per window of ``width`` consecutive points."""

from slowstats.core import mean, std


def rolling_mean(xs: list[float], width: int) -> list[float]:
    # EVOLVE-BLOCK-START
    return [mean(xs[i : i + width]) for i in range(len(xs) - width + 1)]
    # EVOLVE-BLOCK-END


def rolling_std(xs: list[float], width: int) -> list[float]:
    # EVOLVE-BLOCK-START
    return [std(xs[i : i + width]) for i in range(len(xs) - width + 1)]
    # EVOLVE-BLOCK-END
