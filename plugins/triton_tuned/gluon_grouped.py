"""The grouped GEMM warp-specialised, in Gluon: :mod:`.gluon_ws`'s loader
and two consumers walking the grouped path's tile table (:mod:`.grouped`)
instead of a dense grid.

Why: an MoE layer's prefill is a dense GEMM cut at its experts' edges, and
where every member is large the ``torch.mm`` loop runs near the GPU's peak
one member after another. The grouped TMA kernel (:mod:`.grouped_tma_kernel`)
is the dense persistent Triton kernel's K loop, which ends every step in
CTA-wide barriers; on the H200 it ran 0.95-0.99x the loop at Mixtral's
prefill routing, as that kernel ran up to 1.8% behind cuBLAS where the Gluon
one came level or ahead. This is the Gluon kernel's K loop, step for step
(:func:`.gluon_ws.load_steps`, :func:`.gluon_ws.mma_steps`). On an H100 it
was right and did not beat the TMA form there (FASTER than the loop 1.015x
and 1.035x at Mixtral's prefill against the TMA form's 1.02x and 1.042x,
``evidence/2026-12-06-h100-llm-small-tokens-and-gluon-grouped``), so it is
offered only with ``GEMMREG_TRITON_TUNED_UNMEASURED=1``
(:func:`.grouped.gluon_here`), for an H200 to weigh.

How the tiles stay inside their member, with host descriptors only (no
descriptor is made on the device, so no global scratch):

- A is read through one descriptor of all its rows: a tile's rows past its
  member read the next member's rows (or, past A, zeros) into accumulator
  rows that are never stored.
- B is one stack of the members' weights read through one descriptor: the
  N x K weights of a transposed view (a stacked ``nn.Linear`` weight) at
  row member x N + the tile's column, whose columns past N read the next
  member's first rows into accumulator columns never stored; or the K x N
  weights of a row-major B at row member x K + the step's, only where K is
  a whole number of K steps (else a step would add the next member's rows
  into the sum). :func:`stacked_b` says which, the host launcher when.
- C: a tile wholly inside its member is stored through one descriptor of
  all of C, by TMA; a member's last, partial tile by each consumer from its
  registers, masked at the member's last row and at N (what it holds past
  them is the other members' and the next columns' products).

Operands: A and C row-major, fp16 or bf16, TMA-able (:mod:`.grouped_tma`'s
rule); launch with ``num_warps=4`` and one program per SM at most, as
:func:`.gluon_ws.gemm_gluon_ws`.
"""

from typing import TYPE_CHECKING, Any

from gemmreg_plugins.triton_tuned import gluon_ws, tile_parts
from gemmreg_plugins.triton_tuned.gluon_ws import (
    CONSUMER_REGS,
    LOADER_REGS,
    load_steps,
    mma_steps,
    shared_ring,
)
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, tma

if TYPE_CHECKING:
    import torch

TABLE_FIELDS = gl.constexpr(3)
"""A tile table entry: (member, first row, row past the member's last), as
:func:`.grouped.tile_table` writes it."""


@gluon.jit
def _origin(table_ptr, tile, entries, tiles_n, GROUP_M: gl.constexpr, BLOCK_N: gl.constexpr):
    """Tile ``tile``'s member, first row, row past its member's last, and
    first column, in the grouped order the dense kernel walks (an entry is
    a tile row here)."""
    entry, off_n = tile_parts.tile_origin(tile, entries, GROUP_M * tiles_n, GROUP_M, 1, BLOCK_N)
    row = table_ptr + entry * TABLE_FIELDS
    return gl.load(row), gl.load(row + 1), gl.load(row + 2), off_n


@gluon.jit
def _loader(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, c_ptr, table_ptr,
            entries, n, k, stride_cm, GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    B_T: gl.constexpr = b_bufs.type.layout.transposed
    tiles_n = gl.cdiv(n, BLOCK_N)
    k_tiles = gl.cdiv(k, a_desc.block_type.shape[1])
    i = 0
    for tile in range(gl.program_id(0), entries * tiles_n, PROGRAMS):
        member, first, _end, off_n = _origin(table_ptr, tile, entries, tiles_n, GROUP_M, BLOCK_N)
        if B_T:  # the member's N x K weight: rows member x N on
            i = load_steps(a_desc, b_desc, a_bufs, b_bufs, ready, empty, first,
                           member * n + off_n, 0, k_tiles, i)  # fmt: skip
        else:  # the member's K x N weight: rows member x K on
            i = load_steps(a_desc, b_desc, a_bufs, b_bufs, ready, empty, first, off_n,
                           member * k, k_tiles, i)  # fmt: skip


@gluon.jit
def _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, c_ptr, table_ptr,
              entries, n, k, stride_cm, GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr,
              ME: gl.constexpr):  # fmt: skip
    """Consumer ``ME`` (0 or 1): the ``ME``-th half of every tile's rows."""
    BOX_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    tiles_n = gl.cdiv(n, BLOCK_N)
    k_tiles = gl.cdiv(k, a_desc.block_type.shape[1])
    c_buf = c_bufs.index(ME)
    i = 0
    for tile in range(gl.program_id(0), entries * tiles_n, PROGRAMS):
        _member, first, end, off_n = _origin(table_ptr, tile, entries, tiles_n, GROUP_M, BLOCK_N)
        acc, i = mma_steps(a_bufs, b_bufs, ready, empty, k_tiles, i, ME)
        top = first + ME * BOX_M  # my half's first row
        if end - first >= 2 * BOX_M:  # the whole tile inside its member
            tma.store_wait(0)  # my previous store has left c_buf
            c_buf.store(acc.to(c_desc.dtype))
            fence_async_shared()
            gluon_ws._tma_store(c_desc, [top, off_n], c_buf)
        else:  # the member's last tile: its rows only
            _store_rows(c_ptr, acc.to(c_desc.dtype), top, end, off_n, n, stride_cm)
    tma.store_wait(0)


@gluon.jit
def _store_rows(c_ptr, acc, top, end, off_n, n, stride_cm):
    """C[top + i, off_n + j] = acc[i, j] for rows before ``end`` and columns
    before ``n``, from the registers as ``wgmma`` left them; offsets in int64
    before they meet a stride."""
    layout: gl.constexpr = acc.type.layout
    rows = top + gl.arange(0, acc.type.shape[0], layout=gl.SliceLayout(1, layout))
    cols = off_n + gl.arange(0, acc.type.shape[1], layout=gl.SliceLayout(0, layout))
    at = c_ptr + rows.to(gl.int64)[:, None] * stride_cm + cols.to(gl.int64)[None, :]
    gl.store(at, acc, mask=(rows[:, None] < end) & (cols[None, :] < n))


# One function per consumer: a partition's constexpr arguments would reach it
# as runtime values (:mod:`.gluon_ws`).
@gluon.jit
def _first_consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, c_ptr,
                    table_ptr, entries, n, k, stride_cm, GROUP_M: gl.constexpr,
                    PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, c_ptr, table_ptr,
              entries, n, k, stride_cm, GROUP_M, PROGRAMS, 0)  # fmt: skip


@gluon.jit
def _second_consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, c_ptr,
                     table_ptr, entries, n, k, stride_cm, GROUP_M: gl.constexpr,
                     PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, c_ptr, table_ptr,
              entries, n, k, stride_cm, GROUP_M, PROGRAMS, 1)  # fmt: skip


@gluon.jit
def gemm_gluon_grouped(a_desc, b_desc, c_desc, c_ptr, table_ptr, entries, n, k, stride_cm,
                       GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr, STAGES: gl.constexpr,
                       B_TRANSPOSED: gl.constexpr):  # fmt: skip
    """Every member's C rows = its A rows @ its weight, the members' tiles
    listed in ``table_ptr`` (``entries`` x (member, first row, row past the
    member's last), one per 2 x BOX_M rows of each non-empty member).
    Descriptors: :func:`descriptors`; ``c_ptr`` is C's base, for the
    members' last tiles."""
    a_bufs, b_bufs, c_bufs, ready, empty = shared_ring(a_desc, b_desc, c_desc, STAGES,
                                                       B_TRANSPOSED)  # fmt: skip
    args = (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, c_ptr, table_ptr,
            entries, n, k, stride_cm, GROUP_M, PROGRAMS)  # fmt: skip
    gl.warp_specialize(
        [(_first_consumer, args), (_second_consumer, args), (_loader, args)],
        [4, 1],
        [CONSUMER_REGS, LOADER_REGS],
    )


def descriptors(
    a: "torch.Tensor",
    b: "torch.Tensor",
    out: "torch.Tensor",
    block_m: int,
    block_n: int,
    block_k: int,
    b_t: bool,
) -> tuple[Any, ...]:
    """Host-side descriptors of all of A (m x k), the stack of weights (its
    groups x N rows of K with ``b_t``, else groups x K rows of N) and all of
    C, in the boxes :func:`.gluon_ws.descriptors` gives a dense problem."""
    groups, k, n = b.shape  # ``view``: the stack as it lies, never a copy
    stack = b.transpose(1, 2).view(groups * n, k) if b_t else b.view(groups * k, n)
    return gluon_ws.descriptors(a, stack.T if b_t else stack, out, block_m, block_n, block_k, b_t)
