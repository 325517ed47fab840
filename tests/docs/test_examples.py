"""The documentation's examples fail the suite when they break: broken blocks planted in a
temporary page, run by the same machinery that runs README.md and docs/ (tests/docs/examples.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.docs.examples import DOCS, cut_budgets

FENCE = "```"


def run_page(folder: Path, text: str) -> list[tuple[int, BaseException | None]]:
    """Each block's line and what evaluating it raised (None: it passed), as pytest would."""
    page = folder / "page.md"
    page.write_text(textwrap.dedent(text).replace("~~~", FENCE))
    document = DOCS.parse(page)
    DOCS.setup(document.namespace)
    outcomes: list[tuple[int, BaseException | None]] = []
    try:
        for example in document.examples():
            try:
                example.evaluate()
            except (Exception, pytest.skip.Exception) as exc:
                outcomes.append((example.line, exc))
            else:
                outcomes.append((example.line, None))
    finally:
        DOCS.teardown(document.namespace)
    return outcomes


def failures(outcomes: list[tuple[int, BaseException | None]]) -> list[str]:
    return [str(exc) for _, exc in outcomes if isinstance(exc, AssertionError)]


def test_a_python_block_that_raises_fails(tmp_path):
    outcomes = run_page(
        tmp_path,
        """\
        ~~~python
        total = sum([1, 2, 3])
        ~~~

        ~~~python
        assert total == 7, "the page promised 7"
        ~~~
        """,
    )
    assert outcomes[0] == (1, None)
    [message] = failures(outcomes)
    assert "page.md:5: the block raised" in message and "the page promised 7" in message


def test_a_shell_block_that_fails_fails_with_what_it_ran(tmp_path):
    [message] = failures(run_page(tmp_path, "~~~bash\nevoforge top -n 1 --db missing.db\n~~~\n"))
    assert "exited 1" in message and "evoforge top -n 1 --db missing.db" in message
    assert "no archive at missing.db" in message


@pytest.mark.slow
def test_a_problem_whose_seed_fails_fails_the_page(tmp_path):
    outcomes = run_page(
        tmp_path,
        """\
        ~~~python title="broken/problem.py"
        name = "broken"
        objectives = {"score": "maximize"}


        def evaluate(output):
            return {"correct": False, "error": "never right"}
        ~~~

        ~~~python title="broken/seed.py"
        # EVOLVE-BLOCK-START
        def main():
            return 1
        # EVOLVE-BLOCK-END
        ~~~
        """,
    )
    [message] = failures(outcomes)
    assert "end of the page" in message and "never right" in message


def test_a_problem_shown_without_its_seed_fails(tmp_path):
    page = '~~~python title="alone/problem.py"\nname = "alone"\nobjectives = {"s": "maximize"}\n'
    page += "\n\ndef evaluate(output):\n    return {'s': 1.0}\n~~~\n"
    [message] = failures(run_page(tmp_path, page))
    assert "seed_file" in message and "does not exist" in message


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("<!-- skip: needs a GPU -->\n~~~python\ndef broken(:\n~~~\n", "does not parse"),
        ("<!-- skip: a server -->\n~~~bash\nif then fi\n~~~\n", "bash -n refuses"),
        ('~~~toml title="run.toml"\nbudget = = 3\n~~~\n', "does not parse"),
        ("~~~\nevoforge status\n~~~\n", "tag the fence"),
        ("~~~toml\nbudget = 3\n~~~\n", 'needs title="path"'),
        ('~~~bash\npip install -e ".[no_such_extra]"\n~~~\n', "no extra 'no_such_extra'"),
        ("~~~bash\npip install -c no-such-file.txt -e .\n~~~\n", "no-such-file.txt: no such"),
        ("~~~bash\napt-get install -y cowsay\n~~~\n", "which .ci/run does not"),
        ('~~~python title="x.py"\n--8<-- "no/such/file.py"\n~~~\n', "no such file"),
    ],
    ids=[
        "skipped-python-still-parsed",
        "skipped-shell-still-parsed",
        "toml-file-parsed",
        "untagged-fence",
        "untitled-toml",
        "unknown-extra",
        "missing-constraints-file",
        "apt-package-ci-does-not-install",
        "missing-snippet",
    ],
)
def test_a_block_that_cannot_be_what_it_shows_fails(tmp_path, block, expected):
    try:
        outcomes = run_page(tmp_path, block)
    except AssertionError as exc:  # a snippet is read when the page is parsed
        outcomes = [(1, exc)]
    [message] = failures(outcomes)
    assert expected in message


def test_install_steps_are_checked_not_run(tmp_path):
    """The README's install line passes without installing anything; what follows it runs."""
    script = (
        "~~~bash\n"
        'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[tune]" '
        "&& echo ran > ran.txt\n~~~\n"
        "~~~python\nimport pathlib\nassert pathlib.Path('ran.txt').read_text() == 'ran\\n'\n"
        "assert not pathlib.Path('.venv').exists()\n~~~\n"
    )
    assert failures(run_page(tmp_path, script)) == []


def test_requires_skips_where_a_tool_is_missing(tmp_path):
    outcomes = run_page(
        tmp_path, "<!-- requires: no-such-tool-anywhere -->\n~~~bash\nno-such-tool-anywhere\n~~~\n"
    )
    [(_, skipped), _end] = outcomes
    assert isinstance(skipped, pytest.skip.Exception)
    assert "needs no-such-tool-anywhere" in str(skipped)


def test_requires_reads_a_py_name_as_a_module_and_refuses_a_bare_one(tmp_path):
    block = "~~~python\nimport {0}\n~~~\n"
    outcomes = run_page(
        tmp_path,
        "<!-- requires: py:no_such_module_anywhere -->\n"
        + block.format("no_such_module_anywhere")
        + "\n<!-- requires: py:textwrap -->\n"
        + block.format("textwrap")
        + "\n<!-- requires: textwrap -->\n"
        + block.format("textwrap"),
    )
    [(_, skipped), (_, ran), (_, refused), _end] = outcomes
    assert isinstance(skipped, pytest.skip.Exception)
    assert "needs py:no_such_module_anywhere" in str(skipped)
    assert ran is None
    assert isinstance(refused, AssertionError) and "py:textwrap" in str(refused)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("evoforge run circle_packing --budget 6000", "evoforge run circle_packing --budget 60"),
        ("--budget 300 --seed 1", "--budget 5 --seed 1"),
        ("evoforge.run(problem, budget=50)", "evoforge.run(problem, budget=5)"),
        ("budget = 2000\nusd_budget = 20.0", "budget = 20\nusd_budget = 20.0"),
        ("--usd-budget 2 --token-budget 2000000", "--usd-budget 2 --token-budget 2000000"),
    ],
)
def test_budgets_run_small(text, expected):
    assert cut_budgets(text) == expected
