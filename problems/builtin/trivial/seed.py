"""Seed for trivial: return [a, b]; the score is -((a - 3.7)**2 + (b + 1.2)**2)."""

# EVOLVE-BLOCK-START
A = 1.0
B = -0.5
# EVOLVE-BLOCK-END


def main():
    return [A, B]
