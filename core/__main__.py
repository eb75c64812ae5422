"""``python -m gemmreg`` is the ``gemmreg`` command."""

from gemmreg.cli import run

run()
