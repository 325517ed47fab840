"""The ``python`` evaluator: any Python candidate, run in a pool of sandboxed fork servers.

``python -m evoforge.evaluators.python SPEC ...`` is one fork server (started by
:class:`PythonEvaluator`, one per worker).
"""

from evoforge.evaluators.python._evaluator import PythonEvaluator

__all__ = ["PythonEvaluator"]
