import statistics
import unittest

from slowstats.window import rolling_mean, rolling_std


class WindowTest(unittest.TestCase):
    def setUp(self):
        self.xs = [((i * 104729) % 997) / 3.0 - 50.0 for i in range(300)]

    def test_rolling_mean(self):
        for width in (1, 2, 5, 32, 300):
            got = rolling_mean(self.xs, width)
            want = [statistics.fmean(self.xs[i : i + width]) for i in range(301 - width)]
            self.assertEqual(len(got), len(want))
            for a, b in zip(got, want, strict=True):
                self.assertAlmostEqual(a, b, places=7)

    def test_rolling_std(self):
        for width in (1, 3, 32, 300):
            got = rolling_std(self.xs, width)
            want = [statistics.pstdev(self.xs[i : i + width]) for i in range(301 - width)]
            self.assertEqual(len(got), len(want))
            for a, b in zip(got, want, strict=True):
                self.assertAlmostEqual(a, b, places=6)


if __name__ == "__main__":
    unittest.main()
