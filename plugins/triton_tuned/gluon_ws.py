"""The warp-specialised persistent GEMM for Hopper, in Gluon (Triton's
lower-level language, ``triton.experimental.gluon``): the ``gluon_ws`` path.

Why Gluon: Triton's own warp specialisation does nothing for the persistent
kernel of :mod:`.kernels` with 8 warps (session 18: the very same binary),
and with 4 warps its forms hung on the H200 at their first launch
(``evidence/2026-12-02-h200-session20/p3``). Without it, every K step of
the persistent kernel ends in CTA-wide barriers, and a stage is handed back
to the loads only when all eight warps pass them. Here the roles are written
out, as cuBLAS's and CUTLASS's Hopper kernels have them:

- a loader (one warp) issues the TMA loads of each K step into a ring of
  ``STAGES`` buffers: it waits on the stage's *empty* barrier and arms its
  *ready* barrier with the bytes to come;
- two consumers (one warpgroup each) wait on *ready*, run ``wgmma`` with one
  group in flight, and hand a stage back (*empty*) as soon as the group that
  read it is done; each stores its C through its own shared buffer and TMA.

Two ways to share the work (``PINGPONG``): *cooperative*, each consumer takes
one half (a BLOCK_M/2-row box) of every tile; *ping-pong*, the consumers take
whole tiles in turn, and while one stores its tile the other runs its K loop,
so the tensor cores do not wait for the epilogue. In ping-pong a consumer
starts a K loop only once the other has finished its own (the *turn*
barriers): with both in the ring at once, one could wait on a stage two uses
ahead, which an mbarrier's phase parity cannot tell from the use before.

Operands: A (M x K) and B (K x N) row-major, fp16 or bf16, TMA-able (the
launcher falls back to the tiled path otherwise); TMA zero-fills the boxes
that cross an edge and clips the stores, so ragged shapes need no masks.
Imported by the kernel launcher only, on a Hopper GPU: the module imports
Gluon at its top, which the CPU interpreter does not run.
"""

from typing import TYPE_CHECKING, Any

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

CONSUMER_REGS = gl.constexpr(232)
"""Registers per consumer thread: a 64x256 or 128x128 fp32 accumulator takes
128 of them. 232 + 232 + 24 (the loader) warpgroups' worth fit the SM's 64K."""
LOADER_REGS = gl.constexpr(24)
"""The fewest a warp may have: the loader holds scalars only."""


@gluon.jit
def _origin(tile, tiles_m, tiles_per_group, GROUP_M: gl.constexpr, BLOCK_M: gl.constexpr,
            BLOCK_N: gl.constexpr):  # fmt: skip
    """Grouped order, as :func:`.tile_parts.tile_origin`."""
    first_m = (tile // tiles_per_group) * GROUP_M
    rows = gl.minimum(tiles_m - first_m, GROUP_M)
    off_m = (first_m + (tile % tiles_per_group) % rows) * BLOCK_M
    off_n = ((tile % tiles_per_group) // rows) * BLOCK_N
    return off_m, off_n


@gluon.jit
def _loader(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, m, n, k,
            GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    BOXES: gl.constexpr = a_bufs.type.shape[0] // b_bufs.type.shape[0]  # A boxes per stage
    BOX_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    BLOCK_N: gl.constexpr = b_desc.block_type.shape[1]
    STAGES: gl.constexpr = b_bufs.type.shape[0]
    tiles_m = gl.cdiv(m, BOXES * BOX_M)
    tiles_n = gl.cdiv(n, BLOCK_N)
    k_tiles = gl.cdiv(k, BLOCK_K)
    tiles_per_group = GROUP_M * tiles_n
    step_bytes: gl.constexpr = BOXES * a_desc.block_type.nbytes + b_desc.block_type.nbytes
    i = 0
    for tile in range(gl.program_id(0), tiles_m * tiles_n, PROGRAMS):
        off_m, off_n = _origin(tile, tiles_m, tiles_per_group, GROUP_M, BOXES * BOX_M, BLOCK_N)
        for kk in range(k_tiles):
            s = i % STAGES
            mbarrier.wait(empty.index(s), ((i // STAGES) & 1) ^ 1)  # its last use is done
            mbarrier.expect(ready.index(s), step_bytes)
            for box in gl.static_range(BOXES):
                tma.async_copy_global_to_shared(a_desc, [off_m + box * BOX_M, kk * BLOCK_K],
                                                ready.index(s), a_bufs.index(BOXES * s + box))  # fmt: skip
            tma.async_copy_global_to_shared(b_desc, [kk * BLOCK_K, off_n], ready.index(s),
                                            b_bufs.index(s))  # fmt: skip
            i += 1


@gluon.jit
def _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, m, n, k,
              GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr, ME: gl.constexpr):  # fmt: skip
    """Consumer ``ME`` (0 or 1): cooperative, the ``ME``-th A box of every
    tile; ping-pong (one A box per stage), every other tile from ``ME``."""
    BOXES: gl.constexpr = a_bufs.type.shape[0] // b_bufs.type.shape[0]
    PINGPONG: gl.constexpr = BOXES == 1
    BOX_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    BLOCK_N: gl.constexpr = b_desc.block_type.shape[1]
    STAGES: gl.constexpr = b_bufs.type.shape[0]
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_N, 16]
    )
    tiles_m = gl.cdiv(m, BOXES * BOX_M)
    tiles_n = gl.cdiv(n, BLOCK_N)
    k_tiles = gl.cdiv(k, BLOCK_K)
    tiles_per_group = GROUP_M * tiles_n
    pid = gl.program_id(0)
    c_buf = c_bufs.index(ME)
    box: gl.constexpr = 0 if PINGPONG else ME  # which A box of a stage is mine
    first: gl.constexpr = ME if PINGPONG else 0
    stride: gl.constexpr = 2 if PINGPONG else 1
    for j in range(first, gl.cdiv(tiles_m * tiles_n - pid, PROGRAMS), stride):  # j: my tiles
        off_m, off_n = _origin(pid + j * PROGRAMS, tiles_m, tiles_per_group, GROUP_M,
                               BOXES * BOX_M, BLOCK_N)  # fmt: skip
        if PINGPONG:  # the other's K loop of tile j - 1 is done (none before tile 0)
            mbarrier.wait(turn.index(ME), ((j // 2) + ME + 1) & 1, pred=j > 0)
        acc = gl.zeros([BOX_M, BLOCK_N], gl.float32, acc_layout)
        i = j * k_tiles  # the ring's count of K steps before this tile's first
        for kk in range(k_tiles):
            s = i % STAGES
            mbarrier.wait(ready.index(s), (i // STAGES) & 1)
            a = a_bufs.index(BOXES * s + box)
            b = b_bufs.index(s)
            acc = warpgroup_mma(a, b, acc, is_async=True)
            acc, a, b = warpgroup_mma_wait(1, deps=[acc, a, b])
            # The group of the step before is done: hand its stage back.
            mbarrier.arrive(empty.index((i + STAGES - 1) % STAGES), pred=kk > 0)
            i += 1
        acc = warpgroup_mma_wait(0, deps=[acc])
        mbarrier.arrive(empty.index((i + STAGES - 1) % STAGES))
        if PINGPONG:
            mbarrier.arrive(turn.index(1 - ME))  # the other's turn to multiply
        tma.store_wait(0)  # my previous store has left c_buf
        c_buf.store(acc.to(c_desc.dtype))
        fence_async_shared()
        tma.async_copy_shared_to_global(c_desc, [off_m + box * BOX_M, off_n], c_buf)
    tma.store_wait(0)


@gluon.jit
def _first_consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, m, n, k,
                    GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, m, n, k,
              GROUP_M, PROGRAMS, 0)  # fmt: skip


@gluon.jit
def _second_consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, m, n, k,
                     GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, m, n, k,
              GROUP_M, PROGRAMS, 1)  # fmt: skip


@gluon.jit
def gemm_gluon_ws(a_desc, b_desc, c_desc, m, n, k, GROUP_M: gl.constexpr,
                  PROGRAMS: gl.constexpr, STAGES: gl.constexpr, PINGPONG: gl.constexpr):  # fmt: skip
    """C = A @ B. A comes in BOX_M x BLOCK_K boxes, B in BLOCK_K x BLOCK_N, C
    in BOX_M x BLOCK_N; a tile is two A boxes high (cooperative) or one
    (``PINGPONG``). Launch with ``num_warps=4`` (the first consumer's warps)
    and one program per SM at most."""
    BOXES: gl.constexpr = 1 if PINGPONG else 2
    # Shapes concatenated in place: the JIT takes no starred items in a list,
    # and a list bound to a name becomes a tuple of tensors.
    a_bufs = gl.allocate_shared_memory(
        a_desc.dtype,
        [BOXES * STAGES] + a_desc.block_type.shape,  # noqa: RUF005
        a_desc.layout,
    )
    b_bufs = gl.allocate_shared_memory(
        b_desc.dtype,
        [STAGES] + b_desc.block_type.shape,  # noqa: RUF005
        b_desc.layout,
    )
    c_bufs = gl.allocate_shared_memory(
        c_desc.dtype,
        [2] + c_desc.block_type.shape,  # noqa: RUF005
        c_desc.layout,
    )
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    turn = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
        mbarrier.init(empty.index(s), count=BOXES)  # every consumer that reads the stage
    for c in gl.static_range(2):
        mbarrier.init(turn.index(c), count=1)
    args = (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, m, n, k, GROUP_M,
            PROGRAMS)  # fmt: skip
    gl.warp_specialize(
        [(_first_consumer, args), (_second_consumer, args), (_loader, args)],
        [4, 1],
        [CONSUMER_REGS, LOADER_REGS],
    )


def box_m(block_m: int, pingpong: bool) -> int:
    """The rows of A's and C's TMA boxes: a whole tile, or half of one."""
    return block_m if pingpong else block_m // 2


def descriptors(
    a: "torch.Tensor",  # quoted: no ``from __future__ import annotations`` beside jit code
    b: "torch.Tensor",
    out: "torch.Tensor",
    block_m: int,
    block_n: int,
    block_k: int,
    pingpong: bool,
) -> tuple[Any, ...]:
    """Host-side TMA descriptors of A, B and C, in the boxes and shared-memory
    layouts the kernel takes (128-byte swizzle where the box allows)."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    dtype = {"torch.float16": gl.float16, "torch.bfloat16": gl.bfloat16}[str(a.dtype)]
    rows = box_m(block_m, pingpong)
    boxes = ((a, [rows, block_k]), (b, [block_k, block_n]), (out, [rows, block_n]))
    return tuple(
        TensorDescriptor.from_tensor(t, box, gl.NVMMASharedLayout.get_default_for(box, dtype))
        for t, box in boxes
    )
