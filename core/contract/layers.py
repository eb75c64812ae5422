"""The core's layers, bottom to top: each is a folder of ``core/`` (a
subpackage of ``gemmreg``), and a module's folder is its layer.

Data flows one way, plugins declare -> core decides -> core runs -> records ->
renderers, and imports follow it: a module may import from its own layer and
the layers below, never from a layer above (``tests/test_layers.py`` reads
every import of every core module, those inside functions included, and
holds the core to these folders, to no import cycle and to small modules).

- **contract**: what a plugin sees and the vocabulary every layer speaks:
  the hooks, the records a plugin fills in, the public API (``gemmreg``,
  :func:`gemmreg.where`), the backend decided once, inputs, the run-time
  compiler, the one error of bad input, the names of task kinds, and the
  one serialiser every record goes through (on the wire and on disk).
- **discovery**: finding plugins and loading each one contained (its output
  captured, torch's state watched, Ctrl-C told apart); can a kernel run here.
- **judging**: the rules that turn figures into answers, and the records of
  those answers: statistics, the rounds' design and stop rule, is an output
  right (and is an exception a refusal), verdicts, summaries, regressions;
  and the typed tasks and results that cross the worker boundary (the
  answers' records), with their wire format.
  Nothing here starts a process, times a call or writes a file. It sits
  below running, not after it: the runners call the judges while they run
  (a timing process stops when :mod:`~gemmreg.judging.stats` says its ratio
  is known, a worker checks each output, a comparison ends in verdicts), and
  a judge never calls a runner (placed above running, in the order data
  flows, 22 imports pointed up).
- **deciding**: what to run, decided in the parent before any work starts:
  the user's options and the commands' requests built from them (or from a
  call of the Python API), the correctness matrix, preflight refusals, task time
  limits, the timing defaults and budgets, the sanitizer tools.
- **running**: worker processes and what runs in them: isolation, sessions,
  the worker, the timing protocol and its loops, device monitors, the check
  and the sanitizer pass, a comparison, the manifest of what ran.
- **storage**: saved runs and checks: written as handed, read back checked.
  No presentation: the views a run keeps are rendered by the caller.
- **rendering**: records in, text out: tables, legends, plots.
- **orchestrating**: a command's work from its request to its result,
  with no parsing: ``compare``, ``bench`` and ``check`` for the command line
  and the Python API alike, the sweep over points.
- **interface**: parsing and dispatch: the command line, the Python API
  (:mod:`gemmreg.api`: the same requests, built from a call's arguments)
  and the pytest plugin.

The top of ``core/`` holds the public surface only (:data:`PUBLIC_MODULES`):
the ``gemmreg`` namespace, the hooks, the command, the Python API and the
pytest plugin.
Every other module lives in its layer's folder.
"""

from __future__ import annotations

LAYERS: tuple[str, ...] = (
    "contract",
    "discovery",
    "judging",
    "deciding",
    "running",
    "storage",
    "rendering",
    "orchestrating",
    "interface",
)
"""The layers, bottom to top: each the name of a subpackage of ``gemmreg``."""

PUBLIC_MODULES: dict[str, str] = {
    "__init__": "contract",
    "hookspecs": "contract",
    "__main__": "interface",
    "cli": "interface",
    "testing": "interface",
    "api": "interface",
}
"""The modules directly in ``core/``, each with its layer: the namespace
plugins import, the plugin author's hooks (``gemmreg.hookspecs``), ``python -m
gemmreg``, the console script (``gemmreg.cli:run``), the pytest plugin
(``gemmreg.testing``) and the Python API (``gemmreg.api``, whose names the
namespace lends), at paths users and entry points name."""

UPWARD_IMPORTS: dict[tuple[str, str], str] = {
    ("contract.judge_clock", "running.clocks"): (
        "the clock a plugin's own tuner borrows through the public API is the timing "
        "protocol's own, imported when first called, never at import"
    ),
    ("__init__", "api"): (
        "the Python API's names (gemmreg.compare, bench, check, load_run) are lent "
        "to the namespace at first use (PEP 562), never at import: a plugin's import "
        "of gemmreg stays light"
    ),
}
"""(importer, imported) -> why this import may point up a layer. Kept to a few,
each with its reason; an entry the code no longer needs fails the test."""


def layer_of(module: str) -> int:
    """The position of ``module``'s layer, 0 at the bottom; KeyError if it has
    none. ``module`` is dotted below ``gemmreg``: ``judging.stats``, ``judging``
    (the subpackage itself), ``cli`` (a public module at the top)."""
    if module in PUBLIC_MODULES:
        return LAYERS.index(PUBLIC_MODULES[module])
    folder = module.split(".", 1)[0]
    if folder not in LAYERS:
        raise KeyError(module)
    return LAYERS.index(folder)
