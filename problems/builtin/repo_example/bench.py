"""The workload: rolling means and standard deviations of 4,000 points, timed.

Prints one JSON line: the median CPU time of 7 runs (after a warm-up) in seconds. CPU time of
this single-threaded process, not wall time: on a shared machine it varies far less.
"""

import json
import statistics
import time

from slowstats.window import rolling_mean, rolling_std

POINTS = [((i * 7919) % 10007) / 10.0 for i in range(4000)]


def workload() -> None:
    rolling_mean(POINTS, 32)
    rolling_std(POINTS, 32)


workload()
times = []
for _ in range(7):
    start = time.process_time()
    workload()
    times.append(time.process_time() - start)
print(json.dumps({"runtime_s": statistics.median(times)}))
