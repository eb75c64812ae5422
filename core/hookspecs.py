"""The plugin author's contract: the hooks a gemmreg plugin may implement.

A plugin is a module (or object) with ``@gemmreg.hookimpl`` functions, exposed
through an entry point in the ``gemmreg`` group of its distribution::

    [project.entry-points.gemmreg]
    my_splitk = "my_package.plugin"

and in ``my_package/plugin.py``::

    import gemmreg

    @gemmreg.hookimpl
    def gemmreg_register_kernels(register):
        register(gemmreg.KernelSpec(
            name="my_splitk",
            summary="Triton split-K GEMM",
            prepare=prepare,                      # Problem -> launch(a, b, out)
            capabilities=gemmreg.Capabilities(
                dtypes={"fp16", "bf16"},
                backends={"cuda", "rocm", "cpu"},
                precision={"fp16": "fp16 MMA, fp32 accumulate",
                           "bf16": "bf16 MMA, fp32 accumulate"},
            ),
            tolerances={"fp16": gemmreg.Tolerance(rtol=2e-3),
                        "bf16": gemmreg.Tolerance(rtol=1e-2)},
        ))

Rules the core relies on:

- Importing the module must be cheap: compile kernels in ``prepare`` or on the
  first launch, never at import.
- A plugin never times itself, prints pass/fail or chooses shapes.
- A plugin that keeps anything on disk between processes (autotuning choices,
  say) keeps it under ``$GEMMREG_CACHE_DIR`` (default ``~/.cache/gemmreg``).
  ``gemmreg compare`` points that at an empty directory for its first process,
  so tuning is reported as cold start and reused, as warm start, by the others.
- Under ``gemmreg check --sanitize`` workers have ``GEMMREG_SANITIZING`` set
  (to the tool's name): kernels run 10-100x slower there and timings mean
  nothing, so skip speed-only work such as benchmarking candidate configs.
- Hook implementations may accept fewer arguments than the spec lists, so a
  spec can gain arguments without breaking existing plugins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from gemmreg.records import KernelSpec

PROJECT_NAME = "gemmreg"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)

# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


@hookspec
def gemmreg_register_kernels(register: Callable[[KernelSpec], None]) -> None:
    """Register this plugin's kernels, calling ``register(spec)`` once for each.

    :param register: Validates a :class:`gemmreg.KernelSpec`, rejects a name
        already taken (naming both packages) and records the plugin's origin.
    :returns: Nothing; a returned value is ignored.
    """
