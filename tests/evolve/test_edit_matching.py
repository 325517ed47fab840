"""Locating SEARCH texts as real models write them, and the safety rules that bound it.

One test per matching rule (it fails without that rule: the answer is refused, or applied by
a looser rule), the sloppy habits of small models (tabs, lost indentation, fences, a context
line off by a space), and the refusals: ambiguity, outside the regions, below the threshold.
"""

from __future__ import annotations

import asyncio
import random
import string
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from evoforge.archive import Program, program_id
from evoforge.evaluators import Status
from evoforge.evolve import RunConfig
from evoforge.evolve.checks import _syntax
from evoforge.evolve.edits import MATCH_KINDS, AppliedEdit, EditError, apply_edit
from evoforge.evolve.models import Completion, ModelSpec
from evoforge.evolve.prompts import PromptContext
from evoforge.evolve.prompts._modes import Mode
from evoforge.evolve.proposals import ProposalRequest, ProposalSetup, _call, _propose
from evoforge.problems import load_problem
from evoforge.problems._blocks import frozen_parts
from tests.conftest import TRIVIAL_SEED, TRIVIAL_SPEC

OFFLINE = "offline/mutator"

PROGRAM = """\
import math


def frozen(x):
    return x + 1


# EVOLVE-BLOCK-START
def step(x, n):
    total = 0
    for i in range(n):
        if i % 2:
            total += x * i
    return total
# EVOLVE-BLOCK-END


def evaluate():
    return step(3, 4)
"""

TABBED = PROGRAM.replace("    ", "\t")


def block(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def region(source: str) -> str:
    return source.split("EVOLVE-BLOCK-START\n", 1)[1].split("# EVOLVE-BLOCK-END", 1)[0]


def apply(answer: str, parent: str = PROGRAM, **options: object) -> AppliedEdit:
    edit = apply_edit(parent, answer, **options)
    assert frozen_parts(edit.source) == frozen_parts(parent)
    return edit


# --- one test per rule ---------------------------------------------------------------------


def test_exact() -> None:
    edit = apply(block("    total = 0\n", "    total = 1\n"))
    assert edit.match == "exact" and "    total = 1\n" in edit.source


def test_trailing_spaces_are_whitespace() -> None:
    edit = apply(block("    total = 0   \n    for i in range(n):\t\n", "    total = 2\n"))
    assert edit.match == "whitespace"
    assert region(edit.source).startswith("def step(x, n):\n    total = 2\n        if i % 2:")


def test_crlf_answer_is_whitespace_and_leaves_no_carriage_return() -> None:
    edit = apply(block("    total = 0\r\n", "    total = 5\r\n    total += 1\r\n"))
    assert edit.match == "whitespace"
    assert "    total = 5\n    total += 1\n" in edit.source and "\r" not in edit.source


def test_tabs_for_spaces_is_whitespace_and_replace_gets_spaces() -> None:
    answer = block("\ttotal = 0\n\tfor i in range(n):\n", "\ttotal = 1\n\tfor i in range(n + 1):\n")
    edit = apply(answer)
    assert edit.match == "whitespace"
    assert "    total = 1\n    for i in range(n + 1):\n        if i % 2:" in edit.source
    assert "\t" not in edit.source


@pytest.mark.parametrize("width", [4, 8])
def test_spaces_for_tabs_is_whitespace_and_replace_gets_tabs(width: int) -> None:
    pad = " " * width
    answer = block(
        f"{pad}for i in range(n):\n{pad * 2}if i % 2:\n",
        f"{pad}for i in range(n):\n{pad * 2}if i % 3:\n{pad * 3}total -= 1\n",
    )
    edit = apply(answer, TABBED)
    assert edit.match == "whitespace"
    assert "\tfor i in range(n):\n\t\tif i % 3:\n\t\t\ttotal -= 1\n\t\t\ttotal +=" in edit.source


def test_uniform_indentation_shift_is_reindent() -> None:
    edit = apply(block("if i % 2:\n    total += x * i\n", "if i % 3:\n    total += x\n"))
    assert edit.match == "reindent"
    assert "        if i % 3:\n            total += x\n" in edit.source


def test_lost_indentation_of_a_nested_block_is_reindent() -> None:
    answer = block(
        "for i in range(n):\nif i % 2:\ntotal += x * i\n",
        "for i in range(n):\nif i % 3:\ntotal += x * i\ntotal -= 1\n",
    )
    edit = apply(answer)
    assert edit.match == "reindent"
    assert region(edit.source) == (
        "def step(x, n):\n"
        "    total = 0\n"
        "    for i in range(n):\n"
        "        if i % 3:\n"
        "            total += x * i\n"
        "            total -= 1\n"
        "    return total\n"
    )
    assert _syntax.check_syntax(edit.source) is None


def test_lost_indentation_new_line_after_a_colon_goes_one_level_deeper() -> None:
    answer = block(
        "for i in range(n):\nif i % 2:\ntotal += x * i\n",
        "for i in range(n):\nwhile i > 9:\ni -= 1\nif i % 2:\ntotal += x * i\n",
    )
    edit = apply(answer)
    assert edit.match == "reindent"
    assert "    for i in range(n):\n        while i > 9:\n            i -= 1\n        if i" in (
        edit.source
    )


def test_lost_indentation_else_goes_at_the_level_of_its_if() -> None:
    """A new line that continues a statement (``else:``) is put at the level of the ``if`` it
    continues, not at the previous line's (one body too deep, a syntax error)."""
    answer = block(
        "if i % 2:\ntotal += x * i\nreturn total\n",
        "if i % 2:\ntotal += x * i\nelse:\ntotal -= 1\nreturn total\n",
    )
    edit = apply(answer)
    assert edit.match == "reindent"
    assert (
        "        if i % 2:\n            total += x * i\n        else:\n            total -= 1\n"
        in (edit.source)
    )
    assert _syntax.check_syntax(edit.source) is None


def test_context_line_off_by_a_space_is_fuzzy() -> None:
    answer = block(
        "    total = 0\n    for i in range(n) :\n        if i % 2:\n",
        "    total = 0\n    for i in range(n):\n        if i % 3:\n",
    )
    edit = apply(answer)
    assert edit.match == "fuzzy"
    assert "    for i in range(n):\n        if i % 3:\n            total += x * i\n" in edit.source


def test_renamed_variable_in_one_line_with_wrong_indentation_is_fuzzy() -> None:
    answer = block(
        "for i in range(n):\n    if i % 2:\n        total += x * j\n",
        "for i in range(n):\n    if i % 2:\n        total += x * i * i\n",
    )
    edit = apply(answer)
    assert edit.match == "fuzzy"
    assert "        if i % 2:\n            total += x * i * i\n    return total" in edit.source


def test_the_loosest_rule_of_all_blocks_is_recorded() -> None:
    answer = block("    total = 0\n", "    total = 1\n") + block("return total\n", "return 0\n")
    assert apply(answer).match == "reindent"
    assert MATCH_KINDS == ("exact", "whitespace", "reindent", "fuzzy")


def test_a_rewrite_records_no_match() -> None:
    answer = f"```python\n{PROGRAM.replace('total = 0', 'total = 3')}```\n"
    assert apply(answer).match is None


def test_a_stronger_rule_wins_over_a_looser_place() -> None:
    """The exact copy is used although a reindent place comes first in the program."""
    parent = "# EVOLVE-BLOCK-START\nif a:\n    b = 1\nb = 1\n# EVOLVE-BLOCK-END\n"
    edit = apply(block("b = 1\n", "b = 2\n"), parent)
    assert edit.match == "exact" and edit.source.endswith("    b = 1\nb = 2\n# EVOLVE-BLOCK-END\n")


# --- fences --------------------------------------------------------------------------------


def test_blocks_inside_a_diff_fence() -> None:
    answer = "Change:\n```diff\n" + block("    total = 0\n", "    total = 7\n") + "```\nDone."
    assert "    total = 7\n" in apply(answer).source


@pytest.mark.parametrize(
    "answer",
    [
        "<<<<<<< SEARCH\n```python\n    total = 0\n=======\n    total = 8\n```\n>>>>>>> REPLACE\n",
        "<<<<<<< SEARCH\n    total = 0\n```\n=======\n```python\n    total = 8\n>>>>>>> REPLACE\n",
        "<<<<<<< SEARCH\n```\n    total = 0\n```\n=======\n    total = 8\n>>>>>>> REPLACE\n",
    ],
    ids=["after-search-and-before-replace", "around-the-divider", "search-only"],
)
def test_fence_lines_at_section_edges_are_dropped(answer: str) -> None:
    edit = apply(answer)
    assert edit.match == "exact" and "    total = 8\n" in edit.source and "```" not in edit.source


# --- safety --------------------------------------------------------------------------------

TWICE = """\
# EVOLVE-BLOCK-START
x = f(1)
y = x + 1
z = 0
x = f(2)
y = x + 1
# EVOLVE-BLOCK-END
"""


def test_exact_text_in_two_places_is_refused_with_line_numbers() -> None:
    with pytest.raises(EditError, match=r"several places .*\(line 3, line 6\); add a few"):
        apply_edit(TWICE, block("y = x + 1\n", "y = x + 2\n"))


def test_reindent_in_two_places_is_refused() -> None:
    with pytest.raises(EditError, match=r"several places .*\(line 3, line 6\)"):
        apply_edit(TWICE, block("  y = x + 1\n", "  y = x + 2\n"))


def test_more_context_makes_it_unique() -> None:
    edit = apply(block("x = f(2)\ny = x + 1\n", "x = f(2)\ny = x + 2\n"), TWICE)
    assert edit.source.endswith("x = f(2)\ny = x + 2\n# EVOLVE-BLOCK-END\n")


def test_fuzzy_with_two_near_equal_candidates_is_refused() -> None:
    with pytest.raises(EditError, match=r"about equally close \(lines 2-3: .*lines 5-6"):
        apply_edit(TWICE, block("x = f(3)\ny = x + 1\n", "x = f(3)\ny = x + 2\n"))


def test_fuzzy_below_the_threshold_is_refused() -> None:
    answer = block("    total = 0\n    for i in range(n) :\n", "    total = 1\n")
    assert apply(answer).match == "fuzzy"
    with pytest.raises(EditError, match="not found"):
        apply_edit(PROGRAM, answer, fuzzy_threshold=0.99)


def test_one_place_inside_and_one_outside_applies_inside() -> None:
    parent = "    return x + 1\n# EVOLVE-BLOCK-START\n    return x + 1\n# EVOLVE-BLOCK-END\n"
    for answer in (block("    return x + 1\n", "    return x\n"), block("return x + 1\n", "x\n")):
        edit = apply(answer, parent)
        assert edit.source.startswith("    return x + 1\n# EVOLVE-BLOCK-START\n    ")


def test_outside_only_is_refused() -> None:
    with pytest.raises(EditError, match=r"line 5, outside the EVOLVE-BLOCK regions \(lines 9-14"):
        apply_edit(PROGRAM, block("    return x + 1\n", "    return x + 2\n"))


def test_fuzzy_never_edits_frozen_code_or_markers() -> None:
    """Close to frozen code only (a line of the frozen helper, off by a space): refused."""
    for search in ("def frozen(x) :\n    return x + 1\n", "# EVOLVE-BLOCK-START\ndef step(x,n):\n"):
        with pytest.raises(EditError):
            apply_edit(PROGRAM, block(search, "pass\n"))


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        pytest.param(block("\ttotal = 0\n", "\ttotal = 1\n"), "whitespace", id="tabs"),
        pytest.param(
            block("for i in range(n):\nif i % 2:\n", "for i in range(n):\nif i:\n"),
            "reindent",
            id="lost-indentation",
        ),
        pytest.param(block("    total = 0 \n    for i in range(n) :\n", "    pass\n"), "fuzzy"),
    ],
)
def test_exact_matching_refuses_what_only_tolerant_rules_find(answer: str, kind: str) -> None:
    assert apply(answer).match == kind
    with pytest.raises(EditError, match="not found"):
        apply_edit(PROGRAM, answer, tolerant=False)


def test_exact_matching_keeps_trailing_whitespace_and_uniform_shift() -> None:
    answer = block("    total = 0  \n", "    total = 1\n") + block("return total\n", "return 0\n")
    assert apply(answer, tolerant=False).match == "reindent"


def test_threshold_outside_its_range_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="fuzzy_threshold"):
        apply_edit(PROGRAM, block("x\n", "y\n"), fuzzy_threshold=0)


# --- cost ----------------------------------------------------------------------------------


def _varied_lines(n: int) -> list[str]:
    """``n`` distinct lines of code-like text (random names, so no two look alike)."""
    rng = random.Random(0)

    def name() -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 12)))

    return [
        "    " * rng.randint(0, 3) + f"{name()} = {name()}({name()}, {rng.randint(0, 999)})"
        for _ in range(n)
    ]


def _sloppy_blocks(body: list[str], count: int = 64, step: int = 75) -> str:
    """``count`` blocks whose SEARCH texts are copied sloppily: only the fuzzy rule finds them."""
    answer = ""
    for n in range(count):
        i = 4 + step * n
        search = [body[i].strip(), body[i + 1].replace(" = ", " =  "), body[i + 2]]
        answer += block("".join(f"{s}\n" for s in search), f"changed_{n} = 1\n")
    return answer


@pytest.mark.parametrize("lookalike", [False, True], ids=["varied", "lookalike"])
def test_64_fuzzy_blocks_against_a_5000_line_program_is_fast(lookalike: bool) -> None:
    """Every block needs the fuzzy rule: the budget, or the lookalike cap, bounds the cost."""
    if lookalike:  # lines that are near-anagrams of each other: every window could be close
        body = [f"value_{i} = compute({i}, {i * 7 % 13}, 'k{i % 97}')" for i in range(5000)]
    else:
        body = _varied_lines(5000)
    parent = "# EVOLVE-BLOCK-START\n" + "".join(f"{line}\n" for line in body)
    parent += "# EVOLVE-BLOCK-END\n"
    answer = _sloppy_blocks(body)
    started = time.perf_counter()
    with pytest.raises(EditError, match="too large|resembles too many places") as info:
        apply_edit(parent, answer)
    assert time.perf_counter() - started < 1.0
    if not lookalike:  # the first blocks were applied before the budget ran out
        assert not str(info.value).startswith("block 1:")


def test_many_fuzzy_blocks_in_a_realistic_region_all_apply() -> None:
    body = _varied_lines(300)
    parent = "# EVOLVE-BLOCK-START\n" + "".join(f"{line}\n" for line in body)
    parent += "# EVOLVE-BLOCK-END\n"
    started = time.perf_counter()
    edit = apply(_sloppy_blocks(body, count=32, step=9), parent)
    assert edit.match == "fuzzy" and edit.source.count("changed_") == 32
    assert time.perf_counter() - started < 1.0


# --- the property --------------------------------------------------------------------------

_LINES = PROGRAM.split("\n")[:-1] + TWICE.split("\n")[:-1]


@st.composite
def sloppy_lines(draw: st.DrawFn) -> str:
    """Lines copied from the programs, as a careless model would: reindented, tabbed, edited."""
    lines = draw(st.lists(st.sampled_from(_LINES), min_size=1, max_size=4))
    out = []
    for line in lines:
        how = draw(st.sampled_from(["keep", "strip", "tab", "space", "char", "indent"]))
        if how == "strip":
            line = line.strip()
        elif how == "tab":
            line = line.replace("    ", "\t")
        elif how == "space":
            line += " "
        elif how == "char" and line:
            at = draw(st.integers(0, len(line) - 1))
            line = line[:at] + draw(st.sampled_from("xyz =:")) + line[at + 1 :]
        elif how == "indent":
            line = "    " + line
        out.append(line + "\n")
    return "".join(out)


@st.composite
def answers(draw: st.DrawFn) -> str:
    blocks = draw(st.lists(st.tuples(sloppy_lines(), sloppy_lines()), min_size=1, max_size=3))
    fenced = draw(st.booleans())
    text = "".join(block(s, r.replace("EVOLVE", "EV")) for s, r in blocks)
    return f"```diff\n{text}```\n" if fenced else text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parent=st.sampled_from([PROGRAM, TABBED, TWICE]), answer=answers(), tolerant=st.booleans())
def test_frozen_text_never_changes(parent: str, answer: str, tolerant: bool) -> None:
    try:
        edit = apply_edit(parent, answer, tolerant=tolerant)
    except EditError:
        return
    assert frozen_parts(edit.source) == frozen_parts(parent)
    assert edit.match in MATCH_KINDS


# --- plumbing ------------------------------------------------------------------------------


def _propose_answer(monkeypatch, folder, answer: str, matching: str = "tolerant"):
    """The proposal made from ``answer`` to the seed of the problem in ``folder``."""
    problem = load_problem(folder)

    async def fake_complete(spec, messages, **kwargs):
        return Completion(answer, spec.model, 0.0)

    monkeypatch.setattr(_call, "complete", fake_complete)  # the call _propose makes
    config = RunConfig(problem=str(folder))
    setup = ProposalSetup(
        problem, config.prompts, 0.7, 100, config.retry, (OFFLINE,), edit_matching=matching
    )
    source = problem.seed_source
    parent = Program(
        run_id="r",
        id=program_id(source),
        seq=0,
        source=source,
        parent_id=None,
        island=0,
        generation=0,
        status=Status.OK,
        score=0.0,
        objectives={"score": 0.0},
    )
    context = PromptContext(Mode.DIFF, parent)
    request = ProposalRequest(1, context, ModelSpec(model=OFFLINE), 1, (1,))
    return asyncio.run(_propose.propose(setup, request))


@pytest.mark.parametrize(("matching", "applied"), [("tolerant", True), ("exact", False)])
def test_proposal_setup_chooses_the_matching(monkeypatch, tiny, matching, applied) -> None:
    answer = block("\ta = 0.5\n", "\ta = 0.75\n")  # a tab for the seed's 4 spaces
    proposal = _propose_answer(monkeypatch, tiny, answer, matching)
    if applied:
        assert proposal.child is not None and proposal.child.match == "whitespace"
        assert "\n    a = 0.75\n" in proposal.child.source
    else:
        assert proposal.child is None and "not found" in (proposal.edit_error or "")


MATCH_SEED = """
    # EVOLVE-BLOCK-START
    def main():
        a = 0.5
        match a:
            case 1:
                b = 1.0
            case _:
                b = 0.25
        return [a, b]
    # EVOLVE-BLOCK-END
"""


def test_a_proposal_retries_a_guessed_mapping_before_a_syntax_error(monkeypatch, make_problem):
    """Indentation dropped: the new ``case`` guessed at the level of the line above does not
    parse; the proposal's syntax check makes apply_edit try the other reading, which does."""
    folder = make_problem(TRIVIAL_SPEC, MATCH_SEED)
    answer = block("b = 1.0\ncase _:\n", "b = 1.0\ncase 2:\nb = 2.0\ncase _:\n")
    proposal = _propose_answer(monkeypatch, folder, answer)
    assert proposal.child is not None and proposal.syntax_error is None
    assert "        case 2:\n            b = 2.0\n        case _:\n" in proposal.child.source


@pytest.fixture
def tiny(make_problem):
    return make_problem(TRIVIAL_SPEC, TRIVIAL_SEED)


def test_match_kinds_are_the_archives_edit_match_values():
    import typing

    from evoforge.archive import EDIT_MATCHES
    from evoforge.evolve.edits import MATCH_KINDS
    from evoforge.evolve.edits._match import MatchKind

    assert MATCH_KINDS == EDIT_MATCHES == typing.get_args(MatchKind)
