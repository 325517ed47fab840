"""An example third-party evoforge plugin: the ``example-script`` evaluator and a problem.

evoforge finds this module through the entry point in ``pyproject.toml``::

    [project.entry-points.evoforge]
    example = "evoforge_example"

and calls its hook implementations exactly as it calls the built-ins'.

Every ``evoforge`` command imports this module (a plugin may add commands), so the evaluator,
which imports evoforge's sandbox, is imported inside the hook that registers it: ``evoforge
--help`` does not pay for it.
"""

from pathlib import Path

from evoforge import hookimpl

_PROBLEM_DIR = Path(__file__).parent / "wordcount"


@hookimpl
def register_evaluators(register):
    from evoforge_example._script import ScriptEvaluator

    register(ScriptEvaluator)


@hookimpl
def register_problems(register):
    register("example_wordcount", str(_PROBLEM_DIR))
