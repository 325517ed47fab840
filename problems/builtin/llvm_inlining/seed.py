"""Seed policy for llvm_inlining: LLVM's own -Oz rule, so the seed scores exactly stock -Oz.

``decide(features)`` is called once per call site and returns True to inline it. Stock -Oz
inlines when LLVM's size-cost estimate is below its threshold; ``SCALE`` and ``BONUS`` move
that threshold (1.0 and 0 reproduce stock). Ideas to try: inline more when this is the only
call of the callee (``callee_users == 1``: the callee's body can then disappear), less when
the callee has loops or many blocks, more when constant arguments let the body simplify.
"""

# EVOLVE-BLOCK-START
SCALE = 1.0  # knob: float 0.25..4.0 log
BONUS = 0  # knob: int -100..100


def decide(features):
    cost = features["cost_estimate"]
    threshold = features["threshold"] * SCALE + BONUS
    return cost < threshold


# EVOLVE-BLOCK-END
