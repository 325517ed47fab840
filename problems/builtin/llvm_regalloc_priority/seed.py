"""Seed for llvm_regalloc_priority: an approximation of LLVM's own priority rule.

``decide(features)`` returns the priority of one live range (bigger = allocated first). Like
LLVM's default: ranges that were split wait until the others are done (their priority is
just their size); the others come first (a high bit set), larger ones before smaller ones.
Ideas: use ``weight`` (spill cost) to favour ranges that are expensive to spill, treat very
large ranges differently, order local ranges by position rather than size.
"""

# EVOLVE-BLOCK-START
FIRST_STAGE_BONUS = 2147483648.0  # 2**31: ranges not yet split come first
SPLIT_STAGE = 2


def decide(features):
    size = min(features["li_size"], 16777215)  # LLVM clamps sizes to 24 bits
    if features["stage"] >= SPLIT_STAGE:
        return float(size)
    return FIRST_STAGE_BONUS + size


# EVOLVE-BLOCK-END
