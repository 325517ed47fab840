"""``python -m evoforge.evolve.proposals``: one proposal worker (started by ProposalPool)."""

import sys

from evoforge.evolve.proposals._worker import main

sys.exit(main())
