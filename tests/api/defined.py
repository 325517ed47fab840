"""A problem defined in Python, as a user's module would (for test_api)."""

import math

TARGET = (1.0, 2.0)
SEED = """
# EVOLVE-BLOCK-START
def main():
    return [0.5, 0.25]
# EVOLVE-BLOCK-END
"""


def distance(output):
    return math.dist(output, TARGET)


def score(output):
    return {"score": -distance(output)}
