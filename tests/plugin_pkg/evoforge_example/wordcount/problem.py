"""Print exactly 12 words (an example problem for the ``example-script`` evaluator).

The candidate is a script: whatever it prints to stdout is its answer. Score:
``-abs(words - 12)``, maximised; the optimum is 0. Descriptor: the number of words.
"""

name = "example_wordcount"
evaluator = "example-script"
objectives = {"score": "maximize"}
descriptors = {"words": (0.0, 40.0, 8)}
timeout_s = 10
memory_mb = 512
seed_file = "seed.py"

TARGET = 12


def evaluate(output):
    """Score the script's stdout (a string); never raises."""
    if not isinstance(output, str):
        return {"correct": False, "error": f"expected the script's output text, got {output!r}"}
    words = output.split()
    if not words:
        return {"correct": False, "error": "the script printed nothing; print words to stdout"}
    return {
        "correct": True,
        "score": 0.0 - abs(len(words) - TARGET),  # 0.0 - : no -0.0 at the optimum
        "words": float(len(words)),
        "distinct": len(set(words)),
    }
