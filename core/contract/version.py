"""gemmreg's version, in a module of its own: the manifest of every run
records it (:mod:`gemmreg.instruments.environment`), and a module that reads it
here rather than from the ``gemmreg`` namespace does not depend on all the
namespace exports (the Python API among them, :mod:`gemmreg.api`)."""

from __future__ import annotations

__version__ = "0.1.0"
"""gemmreg's version, recorded in every run's manifest."""
