import math
import statistics
import unittest

from slowstats.core import mean, sqrt, std, variance


class CoreTest(unittest.TestCase):
    def test_sqrt_is_exact_to_rounding(self):
        for k in range(-12, 13):
            for mantissa in (1.0, 2.0, 3.7, 9.99):
                x = mantissa * 10.0**k
                self.assertAlmostEqual(sqrt(x) / math.sqrt(x), 1.0, delta=1e-12, msg=x)
        self.assertEqual(sqrt(0.0), 0.0)
        with self.assertRaises(ValueError):
            sqrt(-1.0)

    def test_summaries(self):
        xs = [((i * 7919) % 1000) / 7.0 for i in range(257)]
        self.assertAlmostEqual(mean(xs), statistics.fmean(xs), places=9)
        self.assertAlmostEqual(variance(xs), statistics.pvariance(xs), places=6)
        self.assertAlmostEqual(std(xs), statistics.pstdev(xs), places=9)


if __name__ == "__main__":
    unittest.main()
