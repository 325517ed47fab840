"""Built-in plugin: the evaluators that ship with evoforge."""

from evaluators._python import PythonEvaluator
from plugins import hookimpl


@hookimpl
def register_evaluators(register):
    register(PythonEvaluator)
