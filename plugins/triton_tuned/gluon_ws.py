"""The warp-specialised persistent GEMM for Hopper, in Gluon (Triton's
lower-level language, ``triton.experimental.gluon``): the ``gluon_ws`` path.

Why Gluon: Triton's own warp specialisation does nothing for the persistent
kernel of :mod:`.kernels` with 8 warps (Triton 3.6: the very same binary),
and with 4 warps its forms hung on the H200 at their first launch
(``evidence/2026-12-02-h200-gluon-warp-specialised/p3``). Without it, every K step of
the persistent kernel ends in CTA-wide barriers, and a stage is handed back
to the loads only when all eight warps pass them. Here the roles are written
out, as in cuBLAS's and CUTLASS's cooperative Hopper kernels:

- a loader (one warp) issues the TMA loads of each K step (A in two boxes of
  half the tile's rows, B in one) into a ring of ``STAGES`` buffers: it waits
  on the stage's *empty* barrier and arms its *ready* barrier with the bytes
  to come, running ahead into the next tile while the consumers store;
- two consumers (one warpgroup each) take one half of every tile: each waits
  on *ready*, runs ``wgmma`` with one group in flight, and arrives on a
  stage's *empty* barrier (count 2, one arrival per consumer) as soon as the
  group that read it is done; each stores its half of C through its own
  shared buffer and TMA.

On the H200 (December 2026: a probe and two tunings) the 128x256 form ran
0.3-1.0% ahead of cuBLAS at 4096^3, 2.7-3.0% at 8192^3, and level at the two
14336-wide shapes, where the persistent kernel of :mod:`.kernels` ran
0.3-1.8% behind. A ping-pong form (the consumers taking whole 128x128 tiles in
turn) was 2% ahead of cuBLAS at 8192x14336x4096 in the probe and in
graph replay, but 3.5% behind end to end in ``gemmreg bench`` (``q2``), and
is left out (commit 05ecee9 has it).

Operands: A (M x K) row-major; B (K x N) row-major, or (``B_TRANSPOSED``) a
transposed view of a row-major N x K weight, as a linear layer's ``x @ W^T``
hands it: then B's boxes are BLOCK_N x BLOCK_K pieces of the weight, and
``wgmma`` reads them K-major from shared memory as they lie (its 16-bit
forms take either order: no copy, no pass through registers). fp16 or bf16,
TMA-able (the launcher falls back to the tiled path otherwise); TMA
zero-fills the boxes that cross an edge and clips the stores, so ragged
shapes need no masks. The tile is 128 rows by BLOCK_N (256, or 128 where the
wide tiles leave SMs idle: ``config_lists.CUDA_GLUON_WS_128X128``).
Imported by the launch closure only, on a Hopper GPU with a Triton whose
Gluon this is written in (``paths_here.GLUON_TRITON``). A tile's K loop is two
functions, the loader's (:func:`load_steps`) and a consumer's
(:func:`mma_steps`), which the grouped kernel (:mod:`.gluon_grouped`) calls too.
"""

import functools
from typing import TYPE_CHECKING, Any

from gemmreg_plugins.triton_tuned import tile_parts, tma_rules  # tile order, TMA boxes
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

if TYPE_CHECKING:
    import torch

# Triton 3.9 names the TMA copies async_load and async_store (the 3.6-3.7
# names raise there); 3.6 and 3.7 have only the old ones.
_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
_tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global

CONSUMER_REGS = gl.constexpr(232)
"""Registers per consumer thread: its half of a 128x256 fp32 accumulator
takes 128 of them. 232 + 232 + 24 (the loader's warpgroup) x 128 threads fit
the SM's 64K."""
LOADER_REGS = gl.constexpr(24)
"""The fewest a warp may have: the loader holds scalars only."""


@gluon.jit
def _tiles(a_desc, c_desc, m, n, k, GROUP_M: gl.constexpr):
    """What the loader and both consumers walk alike: the tile count, the tiles
    in M, the tiles in a group, and the K steps of a tile (two A boxes high).
    BLOCK_N is C's box width, whichever way B's box lies."""
    tiles_m = gl.cdiv(m, 2 * a_desc.block_type.shape[0])
    tiles_n = gl.cdiv(n, c_desc.block_type.shape[1])
    return tiles_m * tiles_n, tiles_m, GROUP_M * tiles_n, gl.cdiv(k, a_desc.block_type.shape[1])


@gluon.jit
def _loader(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, m, n, k,
            GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    BOX_M: gl.constexpr = a_desc.block_type.shape[0]  # half a tile's rows
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    num_tiles, tiles_m, tiles_per_group, k_tiles = _tiles(a_desc, c_desc, m, n, k, GROUP_M)
    i = 0  # K steps loaded so far: the ring's count, the consumers keep the same one
    for tile in range(gl.program_id(0), num_tiles, PROGRAMS):
        off_m, off_n = tile_parts.tile_origin(
            tile, tiles_m, tiles_per_group, GROUP_M, 2 * BOX_M, BLOCK_N
        )
        i = load_steps(a_desc, b_desc, a_bufs, b_bufs, ready, empty, off_m, off_n, 0, k_tiles, i)


@gluon.jit
def load_steps(a_desc, b_desc, a_bufs, b_bufs, ready, empty, off_m, b_n, b_k, k_tiles, i):
    """The loader's part of one tile: its ``k_tiles`` K steps into the ring,
    the first at ring count ``i``; returns the count after them. A's two
    boxes a step start at row ``off_m``; B's box at column ``b_n`` (B^T's
    row, where B's boxes are the N x K weight's) and K row ``b_k`` + the
    step's (a K x N weight's first row within a stack of them, else 0)."""
    BOX_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    STAGES: gl.constexpr = b_bufs.type.shape[0]
    B_T: gl.constexpr = b_bufs.type.layout.transposed  # B^T's boxes (gemm_gluon_ws)
    step_bytes: gl.constexpr = 2 * a_desc.block_type.nbytes + b_desc.block_type.nbytes
    for kk in range(k_tiles):
        s = i % STAGES
        mbarrier.wait(empty.index(s), ((i // STAGES) & 1) ^ 1)  # its last use is done
        mbarrier.expect(ready.index(s), step_bytes)
        for half in gl.static_range(2):
            _tma_load(a_desc, [off_m + half * BOX_M, kk * BLOCK_K],
                                            ready.index(s), a_bufs.index(2 * s + half))  # fmt: skip
        if B_T:  # a BLOCK_N x BLOCK_K box of the N x K weight
            _tma_load(b_desc, [b_n, kk * BLOCK_K], ready.index(s),
                      b_bufs.index(s).permute((1, 0)))  # fmt: skip
        else:
            _tma_load(b_desc, [b_k + kk * BLOCK_K, b_n], ready.index(s), b_bufs.index(s))
        i += 1
    return i


@gluon.jit
def _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, m, n, k,
              GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr, ME: gl.constexpr):  # fmt: skip
    """Consumer ``ME`` (0 or 1): the ``ME``-th half of every tile's rows."""
    BOX_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    num_tiles, tiles_m, tiles_per_group, k_tiles = _tiles(a_desc, c_desc, m, n, k, GROUP_M)
    c_buf = c_bufs.index(ME)
    i = 0
    for tile in range(gl.program_id(0), num_tiles, PROGRAMS):
        off_m, off_n = tile_parts.tile_origin(
            tile, tiles_m, tiles_per_group, GROUP_M, 2 * BOX_M, BLOCK_N
        )
        acc, i = mma_steps(a_bufs, b_bufs, ready, empty, k_tiles, i, ME)
        tma.store_wait(0)  # my previous store has left c_buf
        c_buf.store(acc.to(c_desc.dtype))
        fence_async_shared()
        _tma_store(c_desc, [off_m + ME * BOX_M, off_n], c_buf)
    tma.store_wait(0)


@gluon.jit
def mma_steps(a_bufs, b_bufs, ready, empty, k_tiles, i, ME: gl.constexpr):
    """Consumer ``ME``'s part of one tile: its half of the tile's rows times
    B over ``k_tiles`` K steps from ring count ``i``, handing each stage back
    once the ``wgmma`` group that read it is done; returns the fp32
    accumulator and the ring count after the tile."""
    BOX_M: gl.constexpr = a_bufs.type.shape[1]
    BLOCK_N: gl.constexpr = b_bufs.type.shape[2]  # B's buffers are BLOCK_K x BLOCK_N either way
    STAGES: gl.constexpr = b_bufs.type.shape[0]
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_N, 16]
    )
    acc = gl.zeros([BOX_M, BLOCK_N], gl.float32, acc_layout)
    for kk in range(k_tiles):
        s = i % STAGES
        mbarrier.wait(ready.index(s), (i // STAGES) & 1)
        a = a_bufs.index(2 * s + ME)
        b = b_bufs.index(s)
        acc = warpgroup_mma(a, b, acc, is_async=True)
        acc, a, b = warpgroup_mma_wait(1, deps=[acc, a, b])
        # The group of the step before is done: hand its stage back.
        mbarrier.arrive(empty.index((i + STAGES - 1) % STAGES), pred=kk > 0)
        i += 1
    acc = warpgroup_mma_wait(0, deps=[acc])
    mbarrier.arrive(empty.index((i + STAGES - 1) % STAGES))
    return acc, i


@gluon.jit
def _first_consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, m, n, k,
                    GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, m, n, k,
              GROUP_M, PROGRAMS, 0)  # fmt: skip


@gluon.jit
def _second_consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, m, n, k,
                     GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, m, n, k,
              GROUP_M, PROGRAMS, 1)  # fmt: skip


@gluon.jit
def shared_ring(a_desc, b_desc, c_desc, STAGES: gl.constexpr, B_TRANSPOSED: gl.constexpr):
    """The warp-specialised kernels' shared memory (this one's and
    :mod:`.fp8_gluon`'s): ``STAGES`` stages of two A boxes and one B box, a
    C buffer per consumer, and each stage's *ready* (the loader's expect,
    TMA's bytes) and *empty* (both consumers done) barriers."""
    # Shapes concatenated in place: the JIT takes no starred items in a list,
    # and a list bound to a name becomes a tuple of tensors.
    a_bufs = gl.allocate_shared_memory(
        a_desc.dtype,
        [2 * STAGES] + a_desc.block_type.shape,  # noqa: RUF005
        a_desc.layout,
    )
    # With B_TRANSPOSED, B^T's boxes (BLOCK_N x BLOCK_K of the weight) go to
    # buffers typed as their transpose, BLOCK_K x BLOCK_N, K-major: the
    # consumers hand a stage to wgmma as it is, whichever way B lies. The
    # loader tells the two apart by this layout (a partition's constexpr
    # arguments would arrive as runtime values) and loads into the transpose.
    b_box: gl.constexpr = (
        [b_desc.block_type.shape[1], b_desc.block_type.shape[0]]
        if B_TRANSPOSED
        else b_desc.block_type.shape
    )
    b_layout: gl.constexpr = (
        gl.NVMMASharedLayout(
            swizzle_byte_width=b_desc.layout.swizzle_byte_width,
            element_bitwidth=b_desc.layout.element_bitwidth,
            rank=b_desc.layout.rank,
            transposed=True,
        )
        if B_TRANSPOSED
        else b_desc.layout
    )
    b_bufs = gl.allocate_shared_memory(
        b_desc.dtype,
        [STAGES] + b_box,  # noqa: RUF005
        b_layout,
    )
    c_bufs = gl.allocate_shared_memory(
        c_desc.dtype,
        [2] + c_desc.block_type.shape,  # noqa: RUF005
        c_desc.layout,
    )
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)  # the loader's expect; TMA's bytes
        mbarrier.init(empty.index(s), count=2)  # both consumers done with the stage
    return a_bufs, b_bufs, c_bufs, ready, empty


@gluon.jit
def gemm_gluon_ws(a_desc, b_desc, c_desc, m, n, k, GROUP_M: gl.constexpr,
                  PROGRAMS: gl.constexpr, STAGES: gl.constexpr, B_TRANSPOSED: gl.constexpr):  # fmt: skip
    """C = A @ B in tiles of 2*BOX_M x BLOCK_N: A comes in BOX_M x BLOCK_K
    boxes, B in BLOCK_K x BLOCK_N (``B_TRANSPOSED``: B^T, the N x K weight, in
    BLOCK_N x BLOCK_K), C in BOX_M x BLOCK_N (:func:`descriptors`).
    Launch with ``num_warps=4`` (the first consumer's warps; the other two
    partitions bring the CTA to 12) and one program per SM at most."""
    a_bufs, b_bufs, c_bufs, ready, empty = shared_ring(a_desc, b_desc, c_desc, STAGES,
                                                       B_TRANSPOSED)  # fmt: skip
    args = (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, m, n, k, GROUP_M,
            PROGRAMS)  # fmt: skip
    gl.warp_specialize(
        [(_first_consumer, args), (_second_consumer, args), (_loader, args)],
        [4, 1],
        [CONSUMER_REGS, LOADER_REGS],
    )


@functools.cache
def shared_layout(box: tuple[int, ...], dtype: Any) -> Any:
    """The shared-memory layout of a TMA box of ``dtype`` (128-byte swizzle
    where the box allows), made once per box and dtype: Gluon builds it in
    Python, about 5 us each on a 2-core CI machine, and a launch describes
    three operands (the layout is a frozen dataclass, safe to share)."""
    return gl.NVMMASharedLayout.get_default_for(list(box), dtype)


def host_descriptor(t: "torch.Tensor", box: list[int], dtype: Any) -> Any:
    """A host-side TMA descriptor of ``t`` in ``box``es, in :func:`shared_layout`."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    return TensorDescriptor.from_tensor(t, box, shared_layout(tuple(box), dtype))


def descriptors(
    a: "torch.Tensor",  # quoted: no ``from __future__ import annotations`` beside jit code
    b: "torch.Tensor",
    out: "torch.Tensor",
    block_m: int,
    block_n: int,
    block_k: int,
    b_t: bool = False,
) -> tuple[Any, ...]:
    """Host-side TMA descriptors of A, B and C in the boxes and shared-memory
    layouts the kernel takes (128-byte swizzle where the box allows): A's and
    C's boxes are half a tile's rows, one per consumer; a transposed B
    (``b_t``) is described through the N x K weight it views, in BLOCK_N x
    BLOCK_K boxes (``tma_rules.operand_descriptors``)."""
    dtype = {"torch.float16": gl.float16, "torch.bfloat16": gl.bfloat16}[str(a.dtype)]

    def describe(t: "torch.Tensor", box: list[int]) -> Any:
        return host_descriptor(t, box, dtype)

    rows = block_m // 2
    a_desc, b_desc = tma_rules.operand_descriptors(
        a, b, False, b_t, rows, block_n, block_k, describe
    )
    return a_desc, b_desc, describe(out, [rows, block_n])
