"""``python -m evolve`` is the ``evoforge`` command."""

from evolve.cli import main

main()
