"""Order jobs on one machine to minimise their total weighted tardiness.

Each job has a weight, a processing time and a due date; a job finishing after its due date
costs weight x lateness. ``schedule`` builds the order greedily: at each step it runs the
waiting job of highest ``priority``. The seed's rule is a crude mix of weight and length; the
classic good rules (weighted shortest processing time, apparent tardiness cost) are a few
operator and constant changes away.
"""


# EVOLVE-BLOCK-START
def priority(weight, duration, due, now):
    """How urgently a waiting job should run next (higher runs first)."""
    slack = due - now - duration
    score = weight * 1.0 - duration * 0.5
    if slack < 0.0:
        score += 2.0  # already late: every step of waiting costs its weight
    else:
        score -= slack * 0.1  # plenty of time left: it can wait
    return score


def schedule(jobs):
    """The order to run ``jobs`` (a list of (weight, duration, due)), as job indices."""
    order, now = [], 0.0
    waiting = list(range(len(jobs)))
    while waiting:
        best = max(waiting, key=lambda j: priority(*jobs[j], now))
        order.append(best)
        waiting.remove(best)
        now += jobs[best][1]
    return order


# EVOLVE-BLOCK-END


def run_schedule(jobs):
    return schedule(jobs)
