"""``evoforge problems`` lists everything the README tells people to run by name: the
registered problems, the suites (``kernel_suite``, ``pallas_suite``, ``pie_suite``) and the
built-in examples in other formats (``repo_example``), which ``evoforge run NAME`` runs."""

from __future__ import annotations

import json

from click.testing import CliRunner

from evoforge.evolve.cli import cli
from evoforge.evolve.run._resolve import resolve
from evoforge.problems import examples, suites


def test_the_suites_and_examples_are_listed():
    out = CliRunner().invoke(cli, ["problems"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    for name in ("kernel_suite", "pallas_suite", "pie_suite", "repo_example"):
        (at,) = [i for i, line in enumerate(lines) if line.split()[:1] == [name]]
        assert lines[at + 1].startswith(" "), lines[at : at + 2]  # its state, indented
        assert f"evoforge run {name}" in lines[at + 1]


def test_the_json_rows_say_what_each_is():
    rows = json.loads(CliRunner().invoke(cli, ["problems", "--json"]).output)
    kinds = {row["name"]: row["kind"] for row in rows}
    assert kinds["trivial"] == "problem"
    assert {kinds[name] for name in ("kernel_suite", "pallas_suite", "pie_suite")} == {"suite"}
    assert kinds["repo_example"] == "example"
    pie = next(row for row in rows if row["name"] == "pie_suite")
    lis = next(row for row in rows if row["name"] == "pie_inversions")
    # a suite cannot run where its first task cannot, and says which task and why
    assert bool(pie["runs_here"]) == bool(lis["runs_here"])
    if lis["runs_here"]:
        assert pie["runs_here"] == f"pie_inversions: {lis['runs_here']}"


def test_repo_example_runs_by_its_name():
    assert set(examples()) == {"repo_example"}
    assert not set(examples()) & set(suites())
    (problem,) = resolve("repo_example").problems
    assert problem.name == "repo_example" and problem.evaluator == "repo"
