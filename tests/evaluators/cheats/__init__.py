"""Planted cheating candidates for the ``triton_softmax`` task (see ``test_anticheat.py``).

Each module is a whole candidate program (it defines ``ModelNew``); its docstring says what it
does and which guard must catch it. ``honest.py`` must pass, so the suite cannot pass by
rejecting everything.
"""
