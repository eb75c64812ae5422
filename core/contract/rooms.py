"""The core's rooms, bottom to top: each is a folder of ``core/`` (a
subpackage of ``gemmreg``), and a module's folder is its room.

A room holds one feature whole (checking, timing, reporting, fan-out, the
commands), or a piece of the base every feature stands on (the contract,
discovery, the instruments, the workers), so that a change to one feature reads
and edits one folder. Imports point one way, down this list: a module may
import from its own room and the rooms below, never from a room above
(``tests/test_rooms.py`` reads every import of every core module, those inside
functions included, and holds the core to these folders, to no import cycle and
to small modules).

The base:

- **contract**: what a plugin sees and the vocabulary every room speaks: the
  hooks, the records a plugin fills in, the public API (``gemmreg``,
  :func:`gemmreg.where`), the backend decided once, inputs, the run-time
  compiler, the one error of bad input and the user's options checked before
  any work, the names of task kinds, and the one serialiser every record goes
  through (on the wire and on disk).
- **discovery**: finding plugins and loading each one contained (its output
  captured, torch's state watched, Ctrl-C told apart); can a kernel run here.
- **instruments**: how the machine is read: NVML (clocks, power, throttling,
  the manifest's GPU entry), CUPTI (device activity, read into a device profile
  and a work account), the stream hold of event-timed batches, the device-wide
  sync check, the CUDA tools' whereabouts, the manifest of what a result was
  measured on. Instruments read; they never judge a kernel.
- **workers**: worker processes, whatever they run: isolated, tied to their
  parent, kept as sessions, pinned to one GPU (``--devices``), timed out; the
  typed tasks and results that cross the process boundary, with their wire
  format. Above the instruments, whose readings a worker's results carry.

The features, each on the base:

- **checking**: is a kernel right: the correctness matrix, the float64
  reference and the guards around C, refusals, the check in workers (its kernels
  shared out over GPUs too), the sanitizer pass with its tools and report.
- **timing**: is a kernel faster: rounds, regimes, statistics, verdicts; the
  timing options and points, the clocks and loops of a timing process, the
  device's work recorded and profiled, a comparison's processes and pool. Above
  checking: a timing process checks what its kernels left in C with the
  checker's judge, before and after it times them.
- **reporting**: saved runs and checks, regressions and history between runs,
  and every view of the records: tables, legends, formats, plots, progress
  lines. Above checking and timing, whose records it writes and renders; it
  never measures or decides.
- **fanout**: work spread beyond one timing pool, behind one executor
  interface: a sweep over points (one pool, a pool per GPU, warm Ray actors),
  workers started ahead and pinned, check and compare on a Ray cluster. Above
  reporting: a sweep saves its run after every point and prints each point as it
  finishes.
- **commands**: the ways in, parsing and dispatch: the command line's
  commands, the Python API's keywords and requests, each command's work from its
  request to its result, the pytest plugin's parameters, and the worker
  process's main, which hands each task to the room that knows its work (so no
  room below knows every kind of task). At the top: it calls every room.

The top of ``core/`` holds the public surface only (:data:`PUBLIC_MODULES`):
the ``gemmreg`` namespace, the hooks, the command, the Python API and the
pytest plugin. Every other module lives in its room's folder.
"""

from __future__ import annotations

ROOMS: tuple[str, ...] = (
    "contract",
    "discovery",
    "instruments",
    "workers",
    "checking",
    "timing",
    "reporting",
    "fanout",
    "commands",
)
"""The rooms, bottom to top: each the name of a subpackage of ``gemmreg``."""

BASE: tuple[str, ...] = ROOMS[:4]
"""The rooms every feature stands on; the rest are one feature each."""

PUBLIC_MODULES: dict[str, str] = {
    "__init__": "contract",
    "hookspecs": "contract",
    "__main__": "commands",
    "cli": "commands",
    "testing": "commands",
    "api": "commands",
}
"""The modules directly in ``core/``, each with its room: the namespace
plugins import, the plugin author's hooks (``gemmreg.hookspecs``), ``python -m
gemmreg``, the console script (``gemmreg.cli:run``), the pytest plugin
(``gemmreg.testing``) and the Python API (``gemmreg.api``, whose names the
namespace lends), at paths users and entry points name."""

UPWARD_IMPORTS: dict[tuple[str, str], str] = {
    ("contract.judge_clock", "timing.clocks"): (
        "the clock a plugin's own tuner borrows through the public API is the timing "
        "protocol's own, imported when first called, never at import"
    ),
    ("__init__", "api"): (
        "the Python API's names (gemmreg.compare, bench, check, load_run) are lent "
        "to the namespace at first use (PEP 562), never at import: a plugin's import "
        "of gemmreg stays light"
    ),
    ("workers.task_results", "timing.rounds"): (
        "a timing worker's result carries the rounds it measured, and the Round record "
        "is defined beside the rounds' design; it leaves when Round moves to the results"
    ),
}
"""(importer, imported) -> why this import may point up a room. Kept to a few,
each with its reason; an entry the code no longer needs fails the test."""


def room_of(module: str) -> int:
    """The position of ``module``'s room, 0 at the bottom; KeyError if it has
    none. ``module`` is dotted below ``gemmreg``: ``timing.stats``, ``timing``
    (the subpackage itself), ``cli`` (a public module at the top)."""
    if module in PUBLIC_MODULES:
        return ROOMS.index(PUBLIC_MODULES[module])
    folder = module.split(".", 1)[0]
    if folder not in ROOMS:
        raise KeyError(module)
    return ROOMS.index(folder)
