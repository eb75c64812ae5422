"""Hold the launch stream until the host has queued a whole batch of samples.

Why: a sample is a flush, a start event, the call and an end event. If the
host queues them more slowly than the GPU runs them, the GPU waits inside
the events for the next launch, and the sample times the host. In a probe
on an H200 host (December 2026), queueing one sample of a split-K call
took 58-119 us (the flush's and the events' launches and the call's Python
launch path), against 65 us of flush plus 11-38 us of kernel on the GPU: up
to a third of the batches ran queue-bound, at up to twice the kernel's time,
whenever the host slowed; the same call replayed from a CUDA graph never
did, nor did cuBLAS (a shorter launch path). Which processes and rounds
the host slowed in was luck, so it widened intervals and could turn a
verdict. The spin that led each batch (``BATCH_LEAD_CYCLES``) covered only
its first samples.

So, as nvbench does with its blocking kernel: before a batch, one thread
of one block spins on a word of pinned host memory (:data:`SOURCE`); the
host queues the batch, then writes the word, and the GPU runs the batch
with every launch of it already queued. The spin gives up after
:data:`TIMEOUT_KCYCLES` and says so (a call that synchronises the host, or a
batch too long for the launch queue, would otherwise wait on it). A batch is
held in chunks of at most :data:`MAX_SAMPLES`, so that one chunk's launches
fit the queue.

A batch whose hold gave up is taken again, in chunks half as long: the host
may only have stalled. On an H100 (December 2026, Llama 3 8B's projections
at 2048 and 8192 tokens, bf16 and fp16, 5 processes a point) 5 processes of
80 had a hold give up. Until then such a process went on behind the lead
spin, where a Triton kernel whose launch path (136-332 us a call) outlasted
its flush and work became host-bound: at fp16 2048x4096x4096 it took
199.6 us in that process against 91.0-92.0 us in the other four, its speedup
there read 0.47x against 0.996-0.999x, and the point was INCONCLUSIVE (0.37
to 1.99) where the other processes agreed. Only after :data:`GIVE_UPS` in
a row, the call evidently waiting on the GPU, does the clock fall back to
the lead spin for the rest of the process, with the reason recorded.

On ROCm the same source goes through hiprtc; it has not run on AMD
hardware. Where pinned host memory is not coherent for the GPU there, a
spin could miss the release: its holds give up after the timeout
(:data:`GIVE_UPS` times; the clock then leads every later batch with a spin
and records why).

What this leaves out of an end-to-end sample is the host's own launch
path: the figure is the GPU's time from the start event to the end event
with the call's work queued. The clock times the host around each call
apart (``host ms`` in the report). (The graph-replay regime removes launch
cost the same way, without the flush.)
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gemmreg.contract.gpu_compile import CompiledKernel

SOURCE = r"""
extern "C" __global__ void gemmreg_hold_stream(volatile int* gate, int target,
                                               volatile int* gave_up, int timeout_kcycles) {
    long long start = clock64();
    long long limit = (long long)timeout_kcycles * 1024;
    while (*gate < target) {
        if (clock64() - start > limit) {
            *gave_up = 1;
            return;
        }
    }
}
"""
"""Kernel-only source (NVRTC and hiprtc have no standard headers): spin until
the host has released ``target`` batches, or give up after the timeout."""
NAME = "gemmreg_hold_stream"
TIMEOUT_KCYCLES = 1 << 18
"""2^28 GPU cycles: about 0.14 s at the H200's 1.98 GHz, 0.8 s at 345 MHz.
A chunk of samples is queued in a few milliseconds (about 0.1 ms a sample
on an H200 host); only a host that waits on the GPU (or on a full
launch queue) gets near it."""
MAX_SAMPLES = 64
"""Samples queued behind one hold: four launches each (the poison of C, the
flush, two events) plus the call's, far below the launch queue's depth
(about a thousand entries on CUDA). Within a
chunk the host queues first and the GPU runs after, where they overlapped
before: at microsecond shapes a slot holds fewer samples than it did when
led by a spin. Smaller chunks would overlap one chunk's queueing with the
last one's run (each hold still outside every sample); not yet measured."""

GIVE_UPS = 3
"""Holds that give up in a row on one batch (its chunks halved each time,
64 to 32 to 16 samples) before the clock stops holding: a stalled host
queues the retaken batch in time, a chunk too long for the launch queue
fits at a half or a quarter, and a call that waits on the GPU never does
(it costs a timeout per chunk of the three tries, once per process)."""


class StreamHold:
    """One pinned gate word (the count of released batches) and one give-up word."""

    def __init__(self, torch: ModuleType, kernel: CompiledKernel) -> None:
        """:param torch: the torch module (a stand-in in tests).
        :param kernel: the compiled :data:`SOURCE`, launched as ``kernel.launch(grid, block, args)``."""
        self.torch = torch
        self.kernel = kernel
        words = torch.zeros(2, dtype=torch.int32, pin_memory=True)
        self.words = words
        self.gate, self.gave_up = words[0:1], words[1:2]
        self.released = 0

    def hold(self) -> None:
        """Queue the spin that holds the current stream until the next :meth:`release`."""
        self.kernel.launch((1, 1, 1), (1, 1, 1), [self.gate, self.released + 1, self.gave_up,
                                                  TIMEOUT_KCYCLES])  # fmt: skip

    def release(self) -> None:
        """The host has queued the batch: let the GPU run it."""
        self.released += 1
        self.gate.fill_(self.released)

    def timed_out(self) -> bool:
        """Whether a hold gave up waiting (read after a synchronisation)."""
        return bool(int(self.gave_up.item()))

    def clear(self) -> None:
        """Forget a give-up (after the synchronisation that read it), before
        the batch is held again."""
        self.gave_up.fill_(0)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a chunk is queued.

    Why: a held GPU waits on the host's queueing, and a full collection
    landing there stalls it (about 40 ms in a worker holding torch and
    Triton, measured on a loaded CPU machine); past the hold's timeout the
    batch must be taken again. ``timeit`` turns the collector off around its
    loop for the same reason. Garbage made meanwhile is collected after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def compile_ahead() -> None:
    """Compile the hold's kernel now, into the per-process cache :func:`make` reads.

    Why: NVRTC takes a few hundred ms, and a timing process built its clock
    (and so this kernel) at the start of its turn, while the processes of a
    comparison run one after another: on the H200 each paid it in turn. A worker
    compiles it while it starts, beside the others, with no timed work running.
    A failure is left for :func:`make` to meet and report."""
    from gemmreg.contract.gpu_compile import compile_kernel

    with contextlib.suppress(Exception):
        compile_kernel(SOURCE, NAME)


def make(torch: ModuleType) -> tuple[StreamHold | None, str]:
    """A hold for this process's GPU, or None and why not (the clock then
    leads each batch with a spin instead)."""
    from gemmreg.contract.gpu_compile import compile_kernel

    try:
        hold = StreamHold(torch, compile_kernel(SOURCE, NAME))
        hold.hold()  # one launch, released at once: pinned words reachable, kernel runs
        hold.release()
        torch.cuda.synchronize()
    except Exception as error:  # no run-time compiler, no pinned memory, a refused launch
        return None, f"no stream hold ({type(error).__name__}: {str(error).splitlines()[0][:160]})"
    if hold.timed_out():
        return None, "no stream hold (its first spin never saw the host's release)"
    return hold, ""
