"""The TMA load path: A and B streamed by Hopper's tensor-memory accelerator.

Why: the flat shapes (64x4096x16384, 32x8192x8192) are memory-bound. B is
128 MiB, and the pointer path's ``cp.async`` loads (one 16-byte copy per
thread and instruction, issued by the same 4 warps that run the MMAs) kept
both it and cuBLAS at about 2.7-2.8 TB/s on an H200, well below its HBM3e's
4 TB/s and more. A TMA copy moves a whole box (Triton cuts a tile into boxes
of 128-byte rows) per instruction, issued by one thread, completing on an
mbarrier: more bytes in flight for the same warps, and larger tiles
(BLOCK_N 256, BLOCK_K 128) without more address arithmetic.

Only the operand loads change. The kernel's K slice, its hand-over and its
reductions (serial, tree, atomic) are the pointer path's, byte for byte; C is
still written with masked pointer stores. TMA zero-fills a box's part beyond
the tensor, so M, N and K tails need no masks: the last K slice stops at K,
and a box that crosses K reads zeros for A and B alike.

TMA needs the last stride 1, the other strides multiples of 16 bytes and a
16-byte-aligned base (the rules of ``gemmreg_plugins.triton_tuned.tma_rules``,
restated here: a plugin package imports only the public ``gemmreg``). A
column-major operand is described through its row-major transpose and the
tile transposed in the kernel, which is how the swapped launch (C^T = B^T
A^T) of row-major A and B goes through TMA. Operands that fail the rules
take the pointer path for that call (:func:`describe` returns None), so a
config with ``tma`` set is correct on every layout. The descriptors are
host-side records (``triton.tools.tensor_descriptor``), rebuilt per call from
the operands' pointers and strides: no device allocation, no allocator hook
(in-kernel ``tl.make_tensor_descriptor`` would need ``triton.set_allocator``,
global state shared with other plugins).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import gemmreg
    import torch

TMA_ALIGN_BYTES = 16
"""TMA's alignment for the base and every stride but the last (which must be 1)."""
MIN_CAPABILITY = 9
"""TMA arrived with Hopper (compute capability 9.0)."""


def supported(where: gemmreg.Environment) -> bool:
    """Whether a config's ``tma`` knob applies here: NVIDIA compute capability
    >= 9 with a Triton that has host-side descriptors, or Triton's interpreter
    (which emulates them: the CPU tests run this path). Elsewhere (Ampere,
    ROCm) the knob is ignored and the pointer path runs."""
    if not where.triton_interpreted and (
        where.backend != "cuda" or where.capability is None or where.capability[0] < MIN_CAPABILITY
    ):
        return False
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: F401
    except ImportError:
        return False
    return True


def describe(
    t: torch.Tensor, rows: int, cols: int, s_rows: int, s_cols: int, block: tuple[int, int]
) -> tuple[Any, bool] | None:
    """A descriptor for the kernel's ``rows x cols`` operand stored in ``t`` with
    strides ``(s_rows, s_cols)`` (the swapped launch passes B^T and A^T this
    way, with no view made), loaded in ``block`` tiles; and whether it is
    described through its transpose (the kernel then loads ``[cols, rows]``
    boxes and transposes them). None where TMA cannot take it."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    size = t.element_size()
    if rows < 1 or cols < 1 or t.data_ptr() % TMA_ALIGN_BYTES:
        return None
    if s_cols == 1 and (s_rows * size) % TMA_ALIGN_BYTES == 0:
        return TensorDescriptor(t, [rows, cols], [s_rows, 1], list(block)), False
    if s_rows == 1 and (s_cols * size) % TMA_ALIGN_BYTES == 0:
        return TensorDescriptor(t, [cols, rows], [s_cols, 1], [block[1], block[0]]), True
    return None
