"""slowstats, summary statistics of a list of numbers (evoforge's example repository: a
namespace package, so that it installs with evoforge as plain files)."""

NEWTON_STEPS = 60


def sqrt(x: float) -> float:
    """The square root of ``x`` by Newton's method, started from ``x`` itself."""
    if x < 0:
        raise ValueError(f"sqrt of a negative number: {x}")
    if x == 0:
        return 0.0
    guess = x if x > 1.0 else 1.0
    for _ in range(NEWTON_STEPS):
        guess = 0.5 * (guess + x / guess)
    return guess


def mean(xs: list[float]) -> float:
    total = 0.0
    for x in xs:
        total += x
    return total / len(xs)


def variance(xs: list[float]) -> float:
    """The population variance."""
    m = mean(xs)
    return mean([(x - m) ** 2 for x in xs])


def std(xs: list[float]) -> float:
    """The population standard deviation."""
    return sqrt(variance(xs))
