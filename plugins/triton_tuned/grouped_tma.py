"""Host side of the grouped GEMM's TMA form (:mod:`.grouped_tma_kernel`):
which operands it takes, and its launch.

TMA reads a 2-D box whose last dimension is contiguous, its other strides
multiples of 16 bytes, from a 16-byte-aligned base. The kernel makes its
descriptors at each tile's first row of A and C and at each member's B, so
the rule covers those bases too: A and C row-major with rows of a multiple
of 16 bytes (then every row starts aligned), B one weight per member either
way round (K x N, N contiguous, or a transposed view of an N x K weight, K
contiguous: an expert's ``nn.Linear``) with its member stride a multiple of
16 bytes. Other operands (a transposed A, a K or N of odd length in bytes)
go to the pointer kernel: ``prepare`` asks on storage-less operands, each
launch asks again of the real ones (their bases), as the dense TMA path does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gemmreg
from gemmreg_plugins.triton_tuned.tma_rules import TMA_ALIGN_BYTES

if TYPE_CHECKING:
    import torch
    from gemmreg_plugins.triton_tuned.grouped_configs import GroupedConfig

GroupedLaunch = Any
"""``launch(a, b, out, offsets)``, a grouped problem's launch (what ``prepare`` returns)."""


def _aligned(stride: int, size: int) -> bool:
    return (stride * size) % TMA_ALIGN_BYTES == 0


def b_transposed(b: torch.Tensor) -> bool | None:
    """How TMA takes ``b`` (groups x K x N): False row-major (N contiguous),
    True a transposed view (K contiguous), None neither."""
    size = b.element_size()
    member, rows, cols = b.stride()
    if not _aligned(member, size):
        return None
    if cols == 1 and _aligned(rows, size):
        return False
    if rows == 1 and _aligned(cols, size):
        return True
    return None


def whole_b_rows(b: torch.Tensor) -> int | None:
    """Rows of one descriptor over every member's weight (groups x N), where
    ``b`` is a transposed view of N x K weights lying back to back (a stacked
    ``nn.Linear`` weight), and TMA's 32-bit row coordinate reaches them all;
    None otherwise (a row-major B, gaps between members, more rows)."""
    groups, _, n = b.shape
    if b_transposed(b) is not True or (groups > 1 and b.stride(0) != n * b.stride(2)):
        return None
    rows = groups * n
    return rows if rows < 2**31 else None


def stacked_b(b: torch.Tensor, block_k: int) -> bool | None:
    """How one descriptor reads every member's weight (the Gluon form,
    :mod:`.gluon_grouped`): True where ``b`` is a transposed view of N x K
    weights back to back (:func:`whole_b_rows`); False where it is row-major
    K x N weights back to back, groups x K rows within TMA's 32-bit row
    coordinate, and K a whole number of ``block_k`` steps, so that no step
    reaches into the next member's rows; None otherwise."""
    if whole_b_rows(b) is not None:
        return True
    groups, k, _ = b.shape
    if b_transposed(b) is not False or k % block_k or groups * k >= 2**31:
        return None
    if groups > 1 and b.stride(0) != k * b.stride(1):
        return None
    return False


def layout_refusal(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> str | None:
    """Why these strides cannot take the TMA form, or None (meta tensors too)."""
    for name, t in (("A", a), ("C", out)):
        rows, cols = t.stride()
        if cols != 1 or not _aligned(rows, t.element_size()):
            return f"{name}'s strides {t.stride()} are not row-major rows of 16-byte multiples"
    if b_transposed(b) is None:
        return f"B's strides {b.stride()} are not TMA-able (one 16-byte-aligned weight per member)"
    return None


def refusal(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> str | None:
    """:func:`layout_refusal` plus 16-byte-aligned bases: checked on every
    launch, cheaply (strides and pointers only, no sync)."""
    for name, t in (("A", a), ("B", b), ("C", out)):
        if t.data_ptr() % TMA_ALIGN_BYTES:
            return f"{name}'s base is not {TMA_ALIGN_BYTES}-byte aligned"
    return layout_refusal(a, b, out)


def takes(problem: gemmreg.Problem) -> bool:
    """Whether ``problem``'s layout gives operands the TMA form takes (asked
    in ``prepare`` of storage-less operands with the core's strides)."""
    import torch

    dtype = gemmreg.torch_dtype(problem.dtype)
    groups, m, n, k = len(problem.groups), problem.m, problem.n, problem.k
    a = torch.empty(m, k, dtype=dtype, device="meta")
    b = torch.empty(groups, k, n, dtype=dtype, device="meta")
    out = torch.empty(m, n, dtype=dtype, device="meta")
    a, b = gemmreg.apply_layout(a, b, problem.layout)
    return layout_refusal(a, b, out) is None


def tma_launcher(
    config: GroupedConfig,
    table: torch.Tensor,
    entries: int,
    m: int,
    n: int,
    k: int,
    grid: tuple[int],
    input_precision: str,
    fallback: GroupedLaunch,
) -> GroupedLaunch:
    """``launch(a, b, out, offsets)`` of the TMA form; operands it cannot take
    go to ``fallback`` (the pointer kernel's launch)."""
    import torch
    import triton
    from gemmreg_plugins.triton_tuned.grouped_tma_kernel import grouped_tma_kernel

    kernel = grouped_tma_kernel()
    device = table.device

    def scratch(size: int, alignment: int, stream: object) -> torch.Tensor:
        """Global memory for the device-made descriptors: from torch's
        caching allocator, on the launch's stream (no sync, no kernel)."""
        return torch.empty(size, dtype=torch.int8, device=device)

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, offsets: object) -> Any:
        if refusal(a, b, out) is not None:
            return fallback(a, b, out, offsets)
        transposed = b_transposed(b)
        whole_b = whole_b_rows(b) if config.shared else None  # one descriptor of every weight
        triton.set_allocator(scratch)  # per call: Triton keeps it per context
        return kernel[grid](
            a,
            b,
            out,
            table,
            entries,
            m,
            n,
            k,
            a.stride(0),
            b.stride(0),
            b.stride(2) if transposed else b.stride(1),
            out.stride(0),
            whole_b or 0,
            BLOCK_M=config.block_m,
            BLOCK_N=config.block_n,
            BLOCK_K=config.block_k,
            GROUP_M=config.group_m,
            B_TRANSPOSED=transposed,
            EPILOGUE_PARTS=config.epilogue_parts,
            INPUT_PRECISION=input_precision,
            FLATTEN=config.flatten,
            SHARED=config.shared,
            WHOLE_B=whole_b is not None,
            num_warps=config.num_warps,
            num_stages=config.num_stages,
        )

    return launch


def gluon_launcher(
    config: GroupedConfig,
    table: torch.Tensor,
    entries: int,
    n: int,
    k: int,
    grid: tuple[int],
    fallback: GroupedLaunch,
) -> GroupedLaunch:
    """``launch(a, b, out, offsets)`` of the Gluon form (:mod:`.gluon_grouped`);
    operands it cannot take (:func:`refusal`, a B that is not one stack of
    weights: :func:`stacked_b`) go to ``fallback``."""
    from gemmreg_plugins.triton_tuned import gluon_grouped

    kernel = gluon_grouped.gemm_gluon_grouped
    bm, bn, bk = config.block_m, config.block_n, config.block_k

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, offsets: object) -> Any:
        b_t = stacked_b(b, bk)
        if b_t is None or refusal(a, b, out) is not None:
            return fallback(a, b, out, offsets)
        a_desc, b_desc, c_desc = gluon_grouped.descriptors(a, b, out, bm, bn, bk, b_t)
        return kernel[grid](
            a_desc,
            b_desc,
            c_desc,
            out,
            table,
            entries,
            n,
            k,
            out.stride(0),
            GROUP_M=config.group_m,
            PROGRAMS=grid[0],
            STAGES=config.num_stages,
            B_TRANSPOSED=b_t,
            num_warps=config.num_warps,
        )

    return launch
