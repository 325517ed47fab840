"""Entry point of the trusted native runner: ``python -m evoforge.evaluators.native``."""

import sys

from evoforge.evaluators.native._runner import main

sys.exit(main())
