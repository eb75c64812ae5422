"""``smempoison``: make stale shared memory visible in the values.

No compute-sanitizer tool reports a read of shared memory nobody wrote
(initcheck covers global memory only). Such a read is usually harmless by
luck: the stale word is a finite leftover, multiplied by a zero from the
tile's padding. This check enqueues :file:`smem_poison.hip` right before each
launch of the kernel under test, filling as much shared memory as a block may
opt into with 0xFF bytes (NaN in fp32, fp16, bf16) on twice as many blocks as
the device has multiprocessors. If shared memory keeps its contents from one
kernel to the next, the kernel under test then multiplies NaN by zero, and the
ordinary value check fails with "NaN computed by the kernel".

Whether shared memory keeps its contents across launches is the hardware's
business: until that is shown on the device, the check proves a read of stale
shared memory when it fails, and proves nothing when it passes.
"""

from __future__ import annotations

import functools
from pathlib import Path

import attrs
from gemmreg.contract import gpu_compile

SOURCE = Path(__file__).with_name("smem_poison.hip")
KERNEL = "smem_poison"
THREADS = 256
BLOCKS_PER_MULTIPROCESSOR = 2
"""One block fills a multiprocessor's shared memory; two make sure no
multiprocessor is left without one."""
ROCM_LDS_BYTES = 65536
"""torch's own figure for AMD (no opt-in property there); CDNA4 has more."""


@attrs.frozen(kw_only=True)
class Poisoner:
    kernel: gpu_compile.CompiledKernel
    nbytes: int
    blocks: int

    def __call__(self) -> None:
        self.kernel.launch(
            (self.blocks, 1, 1), (THREADS, 1, 1), (self.nbytes // 4,), shared_mem=self.nbytes
        )


def shared_bytes_per_block(properties: object, rocm: bool) -> int:
    """The most shared memory one block may opt into on this device."""
    optin = getattr(properties, "shared_memory_per_block_optin", None)
    if optin:
        return int(optin)
    return ROCM_LDS_BYTES if rocm else 48 * 1024


@functools.cache
def poisoner() -> Poisoner:
    """Compile the poison kernel and size it for the current device (once)."""
    import torch

    properties = torch.cuda.get_device_properties(torch.cuda.current_device())
    nbytes = shared_bytes_per_block(properties, bool(getattr(torch.version, "hip", None)))
    nbytes -= nbytes % 4
    kernel = gpu_compile.compile_kernel(SOURCE.read_text(), KERNEL)
    kernel.allow_dynamic_shared_memory(nbytes)
    blocks = BLOCKS_PER_MULTIPROCESSOR * int(properties.multi_processor_count)
    return Poisoner(kernel=kernel, nbytes=nbytes, blocks=blocks)


def poison_shared_memory() -> None:
    """Enqueue the poison on the current stream (call right before a launch)."""
    poisoner()()
