"""Seed for code_layout: chain each block to its hottest successor not yet placed.

``decide(function)`` returns the order of the function's blocks (block 0, the entry, first).
It follows the hottest outgoing edge while that edge ran at least ``MIN_COUNT`` times; when
the chain ends it continues with the first unplaced block in the original order. Ideas: start
new chains at the hottest unplaced block, merge chains (as Pettis-Hansen and ext-tsp do), put
never-executed blocks last, weigh edges by count per byte.
"""

# EVOLVE-BLOCK-START
MIN_COUNT = 1  # knob: int 0..1000


def decide(function):
    sizes, edges = function["sizes"], function["edges"]
    n = len(sizes)
    successors = [[] for _ in range(n)]
    for source, target, count in edges:
        successors[source].append((count, target))
    placed = [False] * n
    order = []
    current = 0
    while len(order) < n:
        order.append(current)
        placed[current] = True
        choices = [(c, t) for c, t in successors[current] if not placed[t] and c >= MIN_COUNT]
        if choices:
            current = max(choices)[1]
            continue
        rest = [b for b in range(n) if not placed[b]]
        if not rest:
            break
        current = rest[0]
    return order


# EVOLVE-BLOCK-END
