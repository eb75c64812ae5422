"""Each kernel's operands in several places in memory, rotated across rounds.

On the H200, one torch.mm under two names at 512^3 gave paired ratios that
differed from process to process by 1-3.5% (end-to-end, L2 flushed) while
each process knew its own ratio to +-0.2%: every process drew one placement of
A, B and C in device memory, and at a few microseconds where the operands sit
shows. Processes are the independent unit of the verdict, so such offsets
widen every interval at small sizes. Rotating several copies of the same
operands (the same values, fresh allocations) across a process's
rounds averages placements inside each process instead.

The copies cost memory, so their number falls with the problem's size. Size
alone does not make placement vanish: on an H200 in December 2026 (the
``skprobe`` of evidence/2026-12-02-h200-host-bound-batches) a memory-bound split-K call of 38 us
moved by 3.7% across six placements of its 130 MiB operands (cuBLAS's by
under 1%), and with one placement a process, gemmreg bench's per-process
ratios at 64x4096x16384 spread 1.010-1.044. So the budget grows with the
device's memory (:data:`PLACEMENT_DEVICE_SHARE`): on an H200 that is
sixteen copies up to about 140 MiB a set and four up to about 560 MiB.

Rotating also checks something: every copy's C is postchecked, so a kernel
that caches the first pointers it was given (and never writes the next C)
fails. The copies start with the same values; each round then writes new
ones into the copy a kernel is about to use (:mod:`gemmreg.timing.fresh_values`),
so that a pointer coming back never means the values did.
"""

from __future__ import annotations

from gemmreg.checking.guarded_inputs import InputStorages
from gemmreg.checking.guarded_output import GuardedOutput
from gemmreg.contract.records import Problem
from gemmreg.contract.traffic import footprint_bytes
from gemmreg.timing.fresh_values import Operands

PLACEMENTS = 16
"""The most copies of one kernel's operands that a process rotates. Four
still left an A/A pair's processes apart by about twice what their own
rounds explained at decode shapes (1x4096x4096 to 128x1024x4096 bf16, where
a call is 10-20 us), so some of the 20 projection points stayed undecided;
with sixteen, nine processes of each of three such points were EQUIVALENT
where four left one INCONCLUSIVE
(``evidence/2026-12-03-h200-decisive-verdicts``). Memory caps the count
first for anything larger (:data:`PLACEMENT_DEVICE_SHARE`)."""
PLACEMENT_BUDGET_BYTES = 256 << 20
"""Memory one kernel's copies may take in all, at least (and where the device's
memory is not known): 16 copies up to 16 MiB a set, 4 up to 64 MiB (2048^3
fp32, 2896^3 bf16), one from 256 MiB (about 6000^3 fp32)."""
PLACEMENT_DEVICE_SHARE = 1 / 64
"""Or this share of the device's memory, where that is more: 2.3 GB on an
H200 (four copies or more up to about 560 MiB a set, 8192x14336x4096 bf16
included), 384 MiB on a 24 GB GPU."""


def placement_count(problem: Problem, device_bytes: int | None = None) -> int:
    """How many copies of the operands this problem gets (at least 1), on a
    device of ``device_bytes`` of memory (None: not known)."""
    per_set = footprint_bytes(problem)
    budget = max(PLACEMENT_BUDGET_BYTES, int((device_bytes or 0) * PLACEMENT_DEVICE_SHARE))
    return max(1, min(PLACEMENTS, budget // max(per_set, 1)))


def more_placements(
    taken: InputStorages, problem: Problem, device: str, count: int
) -> list[tuple[Operands, GuardedOutput]]:
    """``count`` fresh copies of the prechecked operands (``taken``'s bytes
    cloned on the device, :meth:`InputStorages.copied`: the same values,
    padding included, with no draw of the generator) and of the guarded C."""
    return [(taken.copied(), GuardedOutput.allocate(problem, device)) for _ in range(count)]
