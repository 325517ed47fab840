"""``python -m evoforge`` is the ``evoforge`` command."""

from evoforge.evolve.cli import main

main()
