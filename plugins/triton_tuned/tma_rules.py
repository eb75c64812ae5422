"""What TMA and Hopper's ``wgmma`` accept: the layout rules the
``persistent_tma`` path checks before it describes an operand (:mod:`.kernels`
falls back to the tiled path when they fail), and when it swaps the operands
of an fp32 (TF32) product. TMA needs the last stride 1, the other strides
multiples of 16 bytes and 16-byte-aligned bases; a transposed operand is
described through its contiguous transpose."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

TMA_ALIGN_BYTES = 16


def tma_stride_refusal(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> str | None:
    """Why these strides cannot go through TMA as (possibly transposed)
    row-major 2-D tensors, or None. Works on meta tensors (``prepare`` asks
    before any operand exists)."""
    for name, t in (("A", a), ("B", b), ("C", out)):
        size = t.element_size()
        rows, cols = t.stride()
        if cols == 1 and (rows * size) % TMA_ALIGN_BYTES == 0:
            continue
        if name != "C" and rows == 1 and (cols * size) % TMA_ALIGN_BYTES == 0:
            continue  # a transposed operand: its transpose is row-major
        return f"{name}'s strides {t.stride()} are not TMA-able"
    return None


def tma_refusal(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> str | None:
    """``tma_stride_refusal`` plus 16-byte-aligned bases: checked on every
    launch, cheaply (strides and pointers only, no sync)."""
    for name, t in (("A", a), ("B", b), ("C", out)):
        if t.data_ptr() % TMA_ALIGN_BYTES:
            return f"{name}'s base is not {TMA_ALIGN_BYTES}-byte aligned"
    return tma_stride_refusal(a, b, out)


def operand_descriptors(
    a: torch.Tensor,
    b: torch.Tensor,
    a_t: bool,
    b_t: bool,
    bm: int,
    bn: int,
    bk: int,
    describe: Callable[[torch.Tensor, list[int]], Any] | None = None,
) -> tuple[Any, Any]:
    """TMA descriptors of A and B for BLOCK_M x BLOCK_K and BLOCK_K x BLOCK_N
    tiles; a transposed operand (``a_t``, ``b_t``) is described through its
    contiguous transpose, its box transposed with it. ``describe(tensor,
    box)`` makes one descriptor: Triton's ``TensorDescriptor.from_tensor`` by
    default; the Gluon kernel's adds the box's shared-memory layout
    (:func:`.gluon_ws.descriptors`). Host-side records, no device allocation."""
    if describe is None:
        from triton.tools.tensor_descriptor import TensorDescriptor

        describe = TensorDescriptor.from_tensor
    a_desc = describe(a.T, [bk, bm]) if a_t else describe(a, [bm, bk])
    return a_desc, b_descriptor(b, b_t, bn, bk, describe)


def b_descriptor(
    b: torch.Tensor,
    b_t: bool,
    bn: int,
    bk: int,
    describe: Callable[[torch.Tensor, list[int]], Any],
) -> Any:
    """B's descriptor for BLOCK_K x BLOCK_N tiles, as :func:`operand_descriptors`
    makes it (a kernel that reads B in boxes of several widths makes one each)."""
    return describe(b.T, [bn, bk]) if b_t else describe(b, [bk, bn])


def is_transposed(t: torch.Tensor) -> bool:
    """Column-major (its transpose is row-major). A 1-row or 1-column operand can
    be both; it counts as row-major when its strides allow that."""
    rows, cols = t.stride()
    return not (cols == 1 and (rows * t.element_size()) % TMA_ALIGN_BYTES == 0) and rows == 1


def tf32_swap(input_precision: str, a: torch.Tensor, a_t: bool, b_t: bool) -> bool:
    """Whether the TMA kernel computes C^T = B^T A^T, for fp32 inputs as TF32.

    Why: Hopper's TF32 ``wgmma`` reads shared-memory operands K-major only (the
    transposing forms are 16-bit only). A row-major B is N-major, so Triton
    copied each B tile out of shared memory and back in, transposed, on every
    K step: on the H200 that kernel lost even to the pointer kernel (November 2026,
    ``evidence/2026-11-30-h200-two-gpu-sweeps/c5/g1/tf32``). ``wgmma``'s first
    operand may come from registers instead, in any order: so the kernel
    swaps the operands and loads B^T into registers; A^T, K-major already, is
    read from shared memory as it is. The load goes through registers because
    the kernel truncates B to TF32 there (clears its low 13 mantissa bits),
    and Triton keeps a computed operand in registers. The product does not
    change: the PTX ISA says ``wgmma`` with ``.tf32`` truncates the low 13 bits
    of its inputs itself. Only for row-major A and B: other layouts keep the
    plain kernel. The other route for a row-major B is ``Config.transpose_b``
    (a K-major copy first), which takes precedence where a config asks for it."""
    import torch

    return input_precision == "tf32" and a.dtype == torch.float32 and not (a_t or b_t)
