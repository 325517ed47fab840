"""Entry point of a fork server process: ``python -m evaluators._forkserver_main SPEC ...``.

Kept apart from :mod:`evaluators._forkserver`, which the package imports, so that running
the server as ``__main__`` never imports its module twice.
"""

import sys

from evaluators._forkserver import main

sys.exit(main())
