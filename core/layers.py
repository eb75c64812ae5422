"""The core's layers, bottom to top: the one map of which module is where.

Data flows one way, plugins declare -> core decides -> core runs -> records ->
renderers, and imports follow it: a module may import from its own layer and
the layers below, never from a layer above (``tests/test_layers.py`` reads
every import of every core module, those inside functions included, and
holds the core to this map, to no import cycle and to small modules).

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
  (a timing process stops when :mod:`~gemmreg.stats` says its ratio is
  known, a worker checks each output, a comparison ends in verdicts), and
  a judge never calls a runner (placed above running, in the order data
  flows, 22 imports pointed up).
- **deciding**: what to run, decided in the parent before any work starts:
  the user's options, the correctness matrix, preflight refusals, task time
  limits, the timing defaults and budgets, the sanitizer tools.
- **running**: worker processes and what runs in them: isolation, sessions,
  the worker, the timing protocol and its loops, device monitors, the check
  and the sanitizer pass, a comparison, the manifest of what ran.
- **storage**: saved runs and checks: written as handed, read back checked.
  No presentation: the views a run keeps are rendered by the caller.
- **rendering**: records in, text out: tables, legends, plots.
- **orchestrating**: a command's work from decided options to saved
  results, with no parsing: the sweep over points.
- **interface**: parsing and dispatch: the command line and the pytest plugin.

After a merge adds a module, add its name to its layer here.
"""

from __future__ import annotations

LAYERS: dict[str, tuple[str, ...]] = {
    "contract": (
        "__init__",
        "layers",
        "hookspecs",
        "records",
        "declaration_checks",
        "tolerance_bounds",
        "tolerance_table",
        "serialization",
        "task_kinds",
        "known_limits",
        "backend",
        "runtime",
        "inputs",
        "gpu_compile",
        "bad_input",
    ),
    "discovery": (
        "registry_records",
        "registry",
        "loading",
        "load_guard",
        "capture",
        "interrupts",
        "torch_state",
        "availability",
        "spec_reference",
    ),
    "judging": (
        "stats",
        "rounds",
        "timing_records",
        "verdicts",
        "rejudging",
        "summaries",
        "regression",
        "peaks",
        "verification",
        "refusals",
        "gpu_trace",
        "activity_analysis",
        "sanitizer_report",
        "task_results",
        "tasks",
        "task_wire",
    ),
    "deciding": (
        "options",
        "matrix",
        "preflight",
        "device_memory",
        "timeouts",
        "timing_options",
        "sanitizer",
    ),
    "running": (
        "isolation",
        "lifeline",
        "sessions",
        "worker",
        "worker_pool",
        "quick_exit",
        "tracing",
        "timing",
        "round_loops",
        "clocks",
        "placements",
        "profiling",
        "sync_check",
        "device_activity",
        "gpu_monitor",
        "gpu_record",
        "smem_poison",
        "checking",
        "sanitizing",
        "comparing",
        "process_results",
        "environment",
    ),
    "storage": ("runs", "run_schema", "check_files"),
    "rendering": ("render", "render_compare", "render_changes", "plots"),
    "orchestrating": ("sweeping",),
    "interface": (
        "__main__",
        "cli",
        "cli_common",
        "cli_check",
        "cli_timing",
        "cli_report",
        "testing",
        "testing_params",
    ),
}
"""Layer name -> the core modules in it (file names without ``.py``), bottom to top."""

UPWARD_IMPORTS: dict[tuple[str, str], str] = {}
"""(importer, imported) -> why this import may point up a layer. Kept to a few,
each with its reason; an entry the code no longer needs fails the test."""


def layer_of(module: str) -> int:
    """The position of ``module``'s layer, 0 at the bottom; KeyError if unmapped."""
    for position, modules in enumerate(LAYERS.values()):
        if module in modules:
            return position
    raise KeyError(module)
