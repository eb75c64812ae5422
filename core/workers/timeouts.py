"""How long one worker task may take before it is called hung.

A flat limit is wrong both ways: five minutes for a 17x19x23 case makes a
hanging plugin cost hours over a matrix, and a big GPU case can honestly need
more. So the default scales with the problem's work, 2*M*N*K, on top of a
fixed part for what every task pays whatever its size; ``--timeout`` sets it
outright. A plugin's first timeout in ``check`` skips its remaining cases.

The constants are measured, then given a wide margin, because a limit that is
too short calls a slow but correct plugin hung:

- CPU: Triton's interpreter runs a check case (prepare, two launches, the
  float64 reference) at 1.5e-7 to 7.5e-7 s per flop on this project's 2-core
  CI machine (256^3 in ~6 s, 130x70x65 in ~0.9 s). :data:`CPU_SECONDS_PER_FLOP`
  allows ~13x the slowest of those, for a loaded machine and slower plugins.
- GPU: the kernel itself is negligible; the float64 reference and the input
  generation dominate large cases. :data:`GPU_SECONDS_PER_FLOP` is 10 GFLOP/s
  effective, far below any GPU's float64 rate, so only a hang reaches it.
"""

from __future__ import annotations

from gemmreg.contract.options import MAX_TIMEOUT_S
from gemmreg.contract.records import Problem

CPU_BASE_S = 60.0
"""Fixed part on the CPU: importing and compiling a plugin's kernel in its
first task, under a loaded machine."""
CPU_SECONDS_PER_FLOP = 1e-5
"""Per flop of 2*M*N*K on the CPU (Triton interpreted): 128^3 adds 42 s, 256^3 336 s."""
GPU_BASE_S = 120.0
"""Fixed part on a GPU: Triton compilation of several configurations, a tuned
plugin's per-shape benchmark of its candidates, a HIP/NVRTC build."""
GPU_SECONDS_PER_FLOP = 1e-10
"""Per flop of 2*M*N*K on a GPU: the largest check case (65600x64x32768) adds 28 s."""


def task_timeout_s(problem: Problem, gpu: bool) -> float:
    """The default limit, in seconds, for one task on ``problem``: at most
    :data:`~gemmreg.contract.options.MAX_TIMEOUT_S`, the bound ``--timeout``
    has (8192^3 interpreted on the CPU scales to four months, past what a
    wait can even be given: the selector's limit is about 24 days)."""
    flops = float(problem.flops)
    if gpu:
        scaled = GPU_BASE_S + GPU_SECONDS_PER_FLOP * flops
    else:
        scaled = CPU_BASE_S + CPU_SECONDS_PER_FLOP * flops
    return min(scaled, MAX_TIMEOUT_S)
