"""The TF32 Gluon kernel (``gemmreg_plugins.triton_tuned.gluon_tf32``) in
clusters of two CTAs whose A box is loaded once and multicast to both.

Why: cycle for cycle the single-CTA kernel is level with cuBLAS's TF32
kernel at 8192^3 yet moves about a quarter more to L2
(``evidence/2026-12-05-h100-tf32-cycles-and-clocks``); cuBLAS launches
clusters of two whose TMA loads can multicast. Here the two CTAs of a
cluster share a 256 x 256 tile of C, each 128 of its columns (two strips of
64, one a consumer), all of its rows: the leader loads A's 256 x BLOCK_K box
once for both (a third less from L2 a K step: 32 + 2 x 16 KB for the pair
against 2 x 48), each CTA loads its own B columns.

How the follower hands a stage back to the leader, whose multicast writes
into the follower's ring: each of the follower's consumers adds one to its
own counter in the leader's shared memory (``atomic_scatter_add`` on a
tensor the cluster splits, which Triton 3.9 lowers to ``mapa`` and
``red.shared::cluster``), and the leader's loader waits until both counts
cover the stage; the leader's own consumers arrive on its mbarrier as in
the single-CTA kernel. One counter for all four consumers, its sum checked,
was wrong on the GPU wherever a cluster took more than one tile: a sum lets
one consumer run ahead for another. An mbarrier arrival would be the usual
way, but Gluon's Hopper ``mbarrier.arrive(from_cta=0)`` arrives only from
the leader, on every CTA's barrier (the other direction from the one
needed: the first form of this kernel, built on it, hung), and a multicast
arrival is sm_100's (``mbarrier.arrive.multicast::cluster``).

Needs Triton 3.9 (``tma.async_load(..., multicast=True)``, ``cga_layout``
on every layout); only ``tf32_cluster.py`` imports this module. The kernel
is written for the cluster: shapes are the pair's, and a layout's
``cga_layout`` says how the pair splits a tensor (``[[1, 0]]``: the second
CTA holds the rows after the first's; ``[[0, 0]]``: both hold all of it).
A cluster tile is BLOCK_M x 2*PAIR_N; consumer ``ME`` takes B box ``ME``
(PAIR_N wide, PAIR_N/2 columns to each CTA).
"""

from typing import Any

from cluster_parts import OWN, hand_back_counters, pause, rank
from gemmreg_plugins.triton_tuned import tile_parts
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

CONSUMER_REGS = gl.constexpr(232)
LOADER_REGS = gl.constexpr(24)
SPLIT_ROWS = gl.constexpr([[1, 0]])  # the follower holds the rows after the leader's


@gluon.jit
def _tiles(a_desc, b_desc, m, n, k, GROUP_M: gl.constexpr):
    tiles_m = gl.cdiv(m, a_desc.block_type.shape[0])
    tiles_n = gl.cdiv(n, 2 * b_desc.block_type.shape[1])
    return tiles_m * tiles_n, tiles_m, GROUP_M * tiles_n, gl.cdiv(k, a_desc.block_type.shape[1])


@gluon.jit
def _loader(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first, released_second,
            m, n, k, stride_cm, GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    BLOCK_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    PAIR_N: gl.constexpr = b_desc.block_type.shape[1]  # one B box: PAIR_N / 2 columns a CTA
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    num_tiles, tiles_m, tiles_per_group, k_tiles = _tiles(a_desc, b_desc, m, n, k, GROUP_M)
    step_bytes: gl.constexpr = a_desc.nbytes_per_cta + 2 * b_desc.nbytes_per_cta
    leader = rank() == 0
    one_warp: gl.constexpr = gl.BlockedLayout([1], [32], [1], [0], cga_layout=[[0]])
    own_first = released_first.reinterpret(shape=[1], layout=OWN)  # this CTA's counts
    own_second = released_second.reinterpret(shape=[1], layout=OWN)
    seen_first = 0
    seen_second = 0
    i = 0
    for tile in range(gl.program_id(0), num_tiles, PROGRAMS):
        off_m, off_n = tile_parts.tile_origin(
            tile, tiles_m, tiles_per_group, GROUP_M, BLOCK_M, 2 * PAIR_N
        )
        for kk in range(k_tiles):
            s = i % STAGES
            phase = ((i // STAGES) & 1) ^ 1
            mbarrier.wait(empty.index(s), phase)  # this CTA's consumers are done with it
            if leader:  # and the follower's, before A is multicast into its ring
                while seen_first < i - STAGES + 1:
                    seen_first = pause(gl.max(own_first.load(one_warp), axis=0))
                while seen_second < i - STAGES + 1:
                    seen_second = pause(gl.max(own_second.load(one_warp), axis=0))
            mbarrier.expect(ready.index(s), step_bytes)
            tma.async_load(a_desc, [off_m, kk * BLOCK_K], ready.index(s), a_bufs.index(s),
                           multicast=True)  # fmt: skip
            for half in gl.static_range(2):
                tma.async_load(b_desc, [kk * BLOCK_K, off_n + half * PAIR_N], ready.index(s),
                               b_bufs.index(2 * s + half))  # fmt: skip
            i += 1


@gluon.jit
def _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first,
              released_second, m, n, k, stride_cm, GROUP_M: gl.constexpr,
              PROGRAMS: gl.constexpr, VECTOR_STORE: gl.constexpr, ME: gl.constexpr):  # fmt: skip
    BLOCK_M: gl.constexpr = a_desc.block_type.shape[0]
    PAIR_N: gl.constexpr = b_desc.block_type.shape[1]
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_M, 8], cga_layout=SPLIT_ROWS
    )
    b_t_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=1)
    per_cta: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0], cga_layout=[[1]])
    ONE = gl.full([2], 1, gl.int32, per_cta)
    TO_LEADER = gl.full([2], 0, gl.int32, per_cta)
    FOLLOWER = gl.arange(0, 2, per_cta) == 1  # the element CTA 1 holds
    num_tiles, tiles_m, tiles_per_group, k_tiles = _tiles(a_desc, b_desc, m, n, k, GROUP_M)
    i = 0
    for tile in range(gl.program_id(0), num_tiles, PROGRAMS):
        off_m, off_n = tile_parts.tile_origin(
            tile, tiles_m, tiles_per_group, GROUP_M, BLOCK_M, 2 * PAIR_N
        )
        acc = gl.zeros([PAIR_N, BLOCK_M], gl.float32, acc_layout)
        s = i % STAGES
        mbarrier.wait(ready.index(s), (i // STAGES) & 1)
        b_next = b_bufs.index(2 * s + ME).permute((1, 0)).load(b_t_layout)
        for kk in range(k_tiles):
            s = i % STAGES
            b_t = b_next
            a_t = a_bufs.index(s).permute((1, 0))
            acc = warpgroup_mma(b_t, a_t, acc, is_async=True)
            if kk + 1 < k_tiles:
                s_next = (i + 1) % STAGES
                mbarrier.wait(ready.index(s_next), ((i + 1) // STAGES) & 1)
                b_next = b_bufs.index(2 * s_next + ME).permute((1, 0)).load(b_t_layout)
            acc, b_t, a_t = warpgroup_mma_wait(0, deps=[acc, b_t, a_t])
            mbarrier.arrive(empty.index(s))  # this CTA's loader
            # the follower's consumers count on the leader, which multicasts A
            if ME == 0:
                released_first.atomic_scatter_add(ONE, TO_LEADER, axis=0, mask=FOLLOWER)
            else:
                released_second.atomic_scatter_add(ONE, TO_LEADER, axis=0, mask=FOLLOWER)
            i += 1
        low, high = acc.reshape([PAIR_N, 2, BLOCK_M // 2]).permute((0, 2, 1)).split()
        _store_c_t(c_ptr, low, off_m, off_n + ME * PAIR_N, m, n, stride_cm, VECTOR_STORE)
        _store_c_t(c_ptr, high, off_m + BLOCK_M // 2, off_n + ME * PAIR_N, m, n, stride_cm,
                   VECTOR_STORE)  # fmt: skip


@gluon.jit
def _store_c_t(c_ptr, acc, off_m, off_n, m, n, stride_cm, VECTOR_STORE: gl.constexpr):
    """``gluon_tf32._store_c_t`` with the pair's split in the vector store's
    layout: in a cluster, Gluon refuses a layout that does not say how the
    CTAs share it, so that function cannot serve here as it is."""
    c_layout: gl.constexpr = (
        gl.BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1], cga_layout=SPLIT_ROWS)
        if VECTOR_STORE
        else acc.type.layout
    )
    if VECTOR_STORE:
        acc = gl.convert_layout(acc, c_layout)
    cols = off_n + gl.arange(0, acc.type.shape[0], layout=gl.SliceLayout(1, c_layout))
    rows = off_m + gl.arange(0, acc.type.shape[1], layout=gl.SliceLayout(0, c_layout))
    at = c_ptr + rows.to(gl.int64)[None, :] * stride_cm + cols.to(gl.int64)[:, None]
    gl.store(at, acc, mask=(rows[None, :] < m) & (cols[:, None] < n))


# One function per consumer and store: a partition's constexpr arguments
# would reach it as runtime values (as in gluon_tf32).
@gluon.jit
def _first(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first,
           released_second, m, n, k, stride_cm, GROUP_M: gl.constexpr,
           PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first,
              released_second, m, n, k, stride_cm, GROUP_M, PROGRAMS, False, 0)  # fmt: skip


@gluon.jit
def _second(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first,
            released_second, m, n, k, stride_cm, GROUP_M: gl.constexpr,
            PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first,
              released_second, m, n, k, stride_cm, GROUP_M, PROGRAMS, False, 1)  # fmt: skip


@gluon.jit
def _first_vs(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first,
              released_second, m, n, k, stride_cm, GROUP_M: gl.constexpr,
              PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first,
              released_second, m, n, k, stride_cm, GROUP_M, PROGRAMS, True, 0)  # fmt: skip


@gluon.jit
def _second_vs(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first,
               released_second, m, n, k, stride_cm, GROUP_M: gl.constexpr,
               PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first,
              released_second, m, n, k, stride_cm, GROUP_M, PROGRAMS, True, 1)  # fmt: skip


@gluon.jit
def gemm_tf32_cluster(a_desc, b_desc, c_ptr, m, n, k, stride_cm, GROUP_M: gl.constexpr,
                      PROGRAMS: gl.constexpr, STAGES: gl.constexpr,
                      VECTOR_STORE: gl.constexpr):  # fmt: skip
    """C = A @ B (fp32, row-major, as TF32) in clusters of two: launch with
    ``num_warps=4, num_ctas=2`` and PROGRAMS clusters (2*PROGRAMS CTAs)."""
    a_shape: gl.constexpr = [STAGES] + a_desc.block_type.shape  # noqa: RUF005
    b_shape: gl.constexpr = [2 * STAGES] + b_desc.block_type.shape  # noqa: RUF005
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, a_shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, b_shape, b_desc.layout)
    ready = mbarrier.allocate_mbarrier(batch=STAGES)
    empty = mbarrier.allocate_mbarrier(batch=STAGES)
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
        mbarrier.init(empty.index(s), count=2)
    released_first, released_second = hand_back_counters()
    args = (a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first, released_second,
            m, n, k, stride_cm, GROUP_M, PROGRAMS)  # fmt: skip
    if VECTOR_STORE:
        gl.warp_specialize([(_first_vs, args), (_second_vs, args), (_loader, args)], [4, 1],
                           [CONSUMER_REGS, LOADER_REGS])  # fmt: skip
    else:
        gl.warp_specialize([(_first, args), (_second, args), (_loader, args)], [4, 1],
                           [CONSUMER_REGS, LOADER_REGS])  # fmt: skip


def descriptors(a: Any, b: Any, block_m: int, block_n: int, block_k: int) -> tuple[Any, Any]:
    """A's box (BLOCK_M x BLOCK_K, both CTAs hold it: multicast) and B's
    (BLOCK_K x BLOCK_N, a cluster tile being two of them: half of each box's
    columns to each CTA)."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    a_layout = gl.NVMMASharedLayout.get_default_for([block_m, block_k], gl.float32,
                                                    cga_layout=[[0, 0]])  # fmt: skip
    b_layout = gl.NVMMASharedLayout.get_default_for([block_k, block_n], gl.float32,
                                                    cga_layout=[[0, 1]])  # fmt: skip
    return (
        TensorDescriptor.from_tensor(a, [block_m, block_k], a_layout),
        TensorDescriptor.from_tensor(b, [block_k, block_n], b_layout),
    )
