"""slowstats: summary and rolling statistics, written the slow way (evoforge's example)."""

from slowstats.core import mean, sqrt, std, variance
from slowstats.window import rolling_mean, rolling_std

__all__ = ["mean", "rolling_mean", "rolling_std", "sqrt", "std", "variance"]
