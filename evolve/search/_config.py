"""Switches of the search itself (``[search]`` in a run configuration).

Each feature here can be turned off on its own, so ``bench/search_quality.py`` can measure
what it brings at equal evaluations; the defaults are the ones that bench showed to help.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from evoforge.base.settings import Settings

Share = Annotated[float, Field(ge=0, le=1)]


class SearchConfig(Settings):
    """How candidates are proposed, filtered and kept (``[search]``).

    Attributes:
        descriptors: ``builtin``: a problem that declares no MAP-Elites descriptors gets the
            built-in ones (program size and structural distance, on fixed ranges; see
            :mod:`evoforge.islands`), so each island keeps many cells; ``none``: one cell per
            island (greedy hill climbing on each island).
        edit_matching: ``tolerant``: a SEARCH text that does not match byte for byte is
            still located (trailing whitespace, tabs, uniform or lost indentation, a close
            unique span); ``exact``: only exact, trailing-whitespace and uniform-indentation
            matches, as before.
        fuzzy_threshold: the least similarity (difflib ratio) of a SEARCH text to the one
            span it is applied to when no normalised match exists.
        novelty: reject, without evaluating them, children equivalent to a stored program of
            the run (same normalised syntax tree) and, with ``near_duplicate_rejection``
            probability, near-duplicates of an elite of their island.
        near_duplicate_similarity: token-shingle Jaccard similarity at or above which a child
            is a near-duplicate.
        near_duplicate_rejection: probability that a near-duplicate is rejected. 0 by
            default: in ``bench/search_quality.py`` rejecting near-duplicates did not help at
            equal evaluations and threw away about 40 % of the model's answers (one-token
            changes are near-duplicates); equivalents are always rejected.
        prompt_evolution: prompt variants (system message and task instructions) are kept in
            the archive, chosen by a bandit on their children's improvement rate, and new
            ones are written from the best (``evoforge prompts`` lists them).
        prompt_variant_every: evaluations between two new prompt variants.
        request_variation: no request goes out identical to one already answered (or in
            flight) in this session: a repeated request is varied first (selection drawn
            anew, then a focus instruction from the built-in bank), since a deterministic
            or low-temperature model answers the same messages the same way (see
            :mod:`evoforge.evolve.search._asking`). In the bench (OpenEvolve example, deterministic
            server) it took calls per evaluation from 1.35 to 1.12 at 100 evaluations and
            from 1.19 to 1.07 at 300, with a best at equal calls as good or better.
        nothing_new_feedback: prompts show the parent's recent attempts that gave nothing
            to evaluate (a copy or a syntax-tree twin of a stored program, an edit of the
            fixed code outside the EVOLVE-BLOCK), each with what it means, so the model
            changes the logic instead. Off by default: the bench's deterministic servers do
            not read prompts, so it showed no gain at equal calls there (1.12 calls per
            evaluation either way); off, those attempts still appear among the lineage's
            recent failures.
        rest_after: a parent whose last ``rest_after`` children were all duplicates is
            rested: not chosen as a parent for its island's next ``rest_selections``
            selections (while the island has another elite); 0 turns resting off. Off by
            default: with 3 it showed no gain at equal calls in the bench (1.12 calls per
            evaluation with it, 1.10 without, at 100 evaluations).
        rest_selections: how long a rested parent rests, in selections of its island.
        mark_fixed_code: the current program's section of a prompt says which of its lines
            may change (the EVOLVE-BLOCK regions, by line number) and that the rest is
            read-only context. Off by default: the bench's servers never edit fixed code and
            do not read prompts, so no gain could be shown yet.
        tune_changed: trials for the float constants a child's edit changed, in a Python
            problem that declares no knob tuning of its own (an OpenEvolve folder, a
            problem of a few lines): when the child scores at least as well as its parent,
            up to 4 such constants are tuned by TPE around the model's values, on the scale
            of its step (:mod:`evoforge.evaluators.tuning._changed`). Each trial is an
            evaluation of the budget, not a model call; 0 turns it off. On by default: on
            OpenEvolve's circle_packing folder (clean deterministic server, 5 seeds) the best
            after 100/300/600 model calls went from 0.469/0.542/0.618 to 0.523/0.599/0.667,
            at 0.65-0.74 calls per evaluation, and nothing was lost at equal evaluations.
        split_edits: when a diff of several SEARCH/REPLACE blocks scores below its parent
            (or fails to run), up to this many of its blocks are evaluated alone, each
            applied to the parent (those that pass the syntax and name checks and are not
            already in the run), and the best of them all is what the archive stores: one
            block of an answer often helps while another hurts. Each is an evaluation of
            the budget, not a model call; 0 turns it off. On by default: on OpenEvolve's
            circle_packing folder (clean deterministic server, 5 seeds) the best after
            300/600 model calls went from 0.599/0.667 (tuning alone) to 0.655/0.709, at 0.40
            calls per evaluation; it trades evaluations for calls (best after 300
            evaluations 0.520 against 0.576), so where an evaluation costs more than a model
            call, turn it off.
        carry_to_best: when a diff improves its parent, the same answer is also applied to
            the run's best program (when that is another program, the edit applies to it and
            the result is new to the run) and that program is evaluated and stored as a
            candidate of its own (edit kind ``carry``): an edit that helped one program often
            helps another that holds the same code. One evaluation of the budget (plus its
            tuning trials), no model call; false turns it off. On by default: on OpenEvolve's
            circle_packing folder (clean deterministic server, seeds 4-8) the best after
            100/300/600 model calls went from 0.520/0.655/0.709 (tuning and split) to
            0.552/0.659/0.721, every seed ahead at 100 calls, with nothing lost at equal
            evaluations; where an evaluation costs more than a model call, turn it off.
    """

    section: ClassVar[str] = "search"

    descriptors: Literal["builtin", "none"] = "builtin"
    edit_matching: Literal["tolerant", "exact"] = "tolerant"
    fuzzy_threshold: Annotated[float, Field(gt=0.5, le=1)] = 0.9
    novelty: bool = True
    near_duplicate_similarity: Annotated[float, Field(gt=0, le=1)] = 0.95
    near_duplicate_rejection: Share = 0.0
    prompt_evolution: bool = False
    prompt_variant_every: Annotated[int, Field(ge=1)] = 40
    request_variation: bool = True
    nothing_new_feedback: bool = False
    rest_after: Annotated[int, Field(ge=0)] = 0
    rest_selections: Annotated[int, Field(ge=1)] = 8
    mark_fixed_code: bool = False
    tune_changed: Annotated[int, Field(ge=0, le=1000)] = 6
    split_edits: Annotated[int, Field(ge=0, le=20)] = 3
    carry_to_best: bool = True
