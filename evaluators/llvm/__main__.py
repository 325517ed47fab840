"""Entry point of the trusted stage runner: ``python -m evoforge.evaluators.llvm``."""

import sys

from evoforge.evaluators.llvm._main import main

sys.exit(main())
