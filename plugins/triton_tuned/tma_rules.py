"""What TMA accepts: the layout rules the ``persistent_tma`` path checks
before it describes an operand (:mod:`.kernels` falls back to the tiled
path when they fail). TMA needs the last stride 1, the other strides
multiples of 16 bytes and 16-byte-aligned bases; a transposed operand is
described through its contiguous transpose."""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def is_transposed(t: torch.Tensor) -> bool:
    """Column-major (its transpose is row-major). A 1-row or 1-column operand can
    be both; it counts as row-major when its strides allow that."""
    rows, cols = t.stride()
    return not (cols == 1 and (rows * t.element_size()) % TMA_ALIGN_BYTES == 0) and rows == 1
