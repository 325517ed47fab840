"""Seed for example_wordcount: print words; the score is -|number of words - 12|."""

# EVOLVE-BLOCK-START
COUNT = 2
EXTRA = 1
WORDS = ["evolve", "better", "programs"]
# EVOLVE-BLOCK-END

print(" ".join(WORDS * COUNT + ["again"] * EXTRA))
