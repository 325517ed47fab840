"""``python -m evoforge.evolve.proposals``: one proposal worker (started by ProposalPool)."""

from evoforge.evolve.proposals._worker import exit_now, main

exit_now(main())
