"""A third-party plugin, installed as a distribution, reaches evoforge only through its entry point.

``tests/plugin_pkg`` is the distribution ``evoforge-example-plugin``: its module
``evoforge_example`` registers the ``example-script`` evaluator and the ``example_wordcount``
problem. Nothing here registers it by hand: the plugin manager must find it through
``importlib.metadata``. CI installs it (``pip install -e tests/plugin_pkg``); without it these
tests fail and say so.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from importlib import metadata

import pytest

from evoforge.archive import Archive
from evoforge.evaluators import Status, evaluator_origins, evaluators
from evoforge.plugins import load_plugins, pm, problems
from evoforge.problems import load_problem
from tests.conftest import ROOT

DIST = "evoforge-example-plugin"
INSTALL = f"pip install -e {ROOT / 'tests' / 'plugin_pkg'}"


@pytest.fixture(autouse=True, scope="module")
def installed() -> None:
    """Fail, not skip, when the example distribution is missing: CI must install it."""
    try:
        metadata.distribution(DIST)
    except metadata.PackageNotFoundError:
        pytest.fail(
            f"the example plugin distribution {DIST!r} is not installed in this environment; "
            f"install it with `{INSTALL}` (CI does this before running the tests)",
            pytrace=False,
        )


def evoforge(*args: str, plugins_env: str | None = None) -> subprocess.CompletedProcess:
    """Run the real ``evoforge`` command in a fresh process (plugins load from scratch)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("EVOFORGE_PLUGINS", None)
    if plugins_env is not None:
        env["EVOFORGE_PLUGINS"] = plugins_env
    return subprocess.run(
        [sys.executable, "-m", "evoforge", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_entry_point_is_discovered_and_loaded_by_the_plugin_manager():
    (point,) = [ep for ep in metadata.entry_points(group="evoforge") if ep.name == "example"]
    assert point.value == "evoforge_example" and point.dist.name == DIST
    load_plugins()
    module = pm.get_plugin("example")
    assert module is not None and module.__name__ == "evoforge_example"
    assert any(
        plugin is module and dist.project_name == DIST for plugin, dist in pm.list_plugin_distinfo()
    )
    from evoforge_example._script import ScriptEvaluator  # imported by its hook, not at load

    assert evaluators()["example-script"] is ScriptEvaluator
    assert evaluator_origins()["example-script"] == ("example", DIST)
    assert problems()["example_wordcount"].endswith("wordcount")


def test_plugins_json_lists_the_third_party_evaluator_with_its_origin():
    done = evoforge("plugins", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {"name": "example", "origin": DIST} in data["plugins"]
    rows = {row["name"]: row for row in data["evaluators"]}
    assert rows["example-script"] == {
        "name": "example-script",
        "targets": ["cpu"],
        "available": True,
        "reason": "",
        "plugin": "example",
        "origin": DIST,
    }
    assert "example_wordcount" in data["problems"]


def test_evoforge_run_of_its_problem_uses_the_third_party_evaluator(tmp_path):
    db = tmp_path / "plugin.db"
    done = evoforge(
        "run", "example_wordcount", "--budget", "6", "--workers", "1", "--seed", "3",
        "--db", str(db), "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with Archive(db) as archive:
        run = archive.latest_run()
        stored = list(archive.programs(run.id))
    assert run.evaluations == 6
    seed = stored[0]
    # Only the script evaluator can score this seed: it defines no main() for `python`.
    assert seed.status is Status.OK, seed.artifacts
    assert seed.objectives == {"score": -5.0}  # it prints 7 words; the target is 12
    assert seed.metrics["distinct"] == 4
    assert "score_s" not in seed.timings  # a fork-server timing: not the python evaluator


def test_evoforge_plugins_env_blocks_or_selects_it(tmp_path):
    blocked = evoforge("plugins", "--json", plugins_env="")
    assert blocked.returncode == 0, blocked.stderr
    data = json.loads(blocked.stdout)
    assert "example" not in {p["name"] for p in data["plugins"]}
    assert "example-script" not in {e["name"] for e in data["evaluators"]}
    refused = evoforge(
        "run", "example_wordcount", "--budget", "2", "--db", str(tmp_path / "b.db"), "-q",
        plugins_env="",
    )  # fmt: skip
    assert refused.returncode == 1
    assert "no problem 'example_wordcount'" in refused.stderr

    selected = evoforge("plugins", "--json", plugins_env="example")
    assert selected.returncode == 0, selected.stderr
    assert "example-script" in {e["name"] for e in json.loads(selected.stdout)["evaluators"]}


# A cascade through the third-party evaluator: each stage's args are the script's argv.
CASCADE_SPEC = """
name = "count_args"
evaluator = "example-script"
objectives = {"score": "maximize"}
timeout_s = 10
memory_mb = 512
stages = [
    {"name": "quick", "args": [3], "threshold": {"metric": "words", "min": 3}},
    {"name": "full", "args": [12]},
]


def evaluate_quick(output):
    return {"words": len(output.split())}


def evaluate(output):
    return {"score": float(len(output.split())), "lines": output.count("\\n")}
"""
CASCADE_SEED = """
import sys

# EVOLVE-BLOCK-START
def words(n):
    return ["w"] * n
# EVOLVE-BLOCK-END

print(" ".join(words(int(sys.argv[1]))))
"""


def test_the_third_party_evaluator_runs_cascades_through_run_cascade(make_problem):
    problem = load_problem(make_problem(CASCADE_SPEC, CASCADE_SEED))
    cls = evaluators()["example-script"]
    short = problem.seed_source.replace('["w"] * n', '["w"] * (n - 1)')

    async def go():
        async with cls(problem) as evaluator:
            return [await evaluator.evaluate(s) for s in (problem.seed_source, short)]

    passed, stopped = asyncio.run(go())
    assert passed.status is Status.OK, passed.artifacts
    assert passed.objectives == {"score": 12.0}
    assert passed.metrics["words"] == 3 and passed.metrics["stage_reached"] == "full"
    assert stopped.status is Status.INCORRECT
    assert stopped.artifacts["error"] == "stage 'quick': words 2 < 3 (threshold)"
    assert stopped.metrics["stage_reached"] == "quick"
    assert stopped.artifacts["cascade"].endswith("not run: full")
