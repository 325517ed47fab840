"""Entry point of a fork server process: ``python -m evoforge.evaluators.python SPEC ...``.

Kept apart from :mod:`evoforge.evaluators.python._forkserver`, which the package imports, so that
running the server as ``__main__`` never imports its module twice.
"""

import sys

from evoforge.evaluators.python._forkserver import main

sys.exit(main())
