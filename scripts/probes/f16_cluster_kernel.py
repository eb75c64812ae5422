"""A 16-bit (fp16, bf16) Gluon GEMM for Hopper in clusters of two CTAs,
each CTA a 128 x 128 tile of C, whose A box is loaded once a cluster and
multicast to both. Right on an H100, and slower there than the one-CTA
kernel it was to beat
(``evidence/2026-12-06-h100-fp8-128-tokens-and-16-bit-checks``).

Why: at M, N, K = 2048 x 1024 x 4096 with B a transposed view (B = W.T, W
an (N, K) row-major weight, so B is K-major) cuBLAS is about 3% ahead of
our persistent TMA Triton kernel (128 x 128 x 64, 5 stages, 8 warps), and
it runs that shape as 128 x 128 tiles in clusters of 1 x 2
(``nvjet_sm90_hsh_128x128_64x6_1x2_h_bz_TNT``): 128 tiles, 64 clusters on
132 SMs, the two tiles of a cluster sharing a box through TMA multicast.

Which operand is multicast: A. The two CTAs of a cluster take adjacent
tiles along N (a cluster tile is 128 x 256), so they need the same
128 x BLOCK_K box of A and different boxes of B: the leader loads A once
for both (per K step the pair reads 16 + 2 x 16 KB from L2 against
2 x 32). Along N because (1) a 1 x 2 cluster is what cuBLAS's kernel name
says it runs; (2) the decode-like shapes we care about (M = 128, N in the
thousands, 128 x 14336 x 4096) have a single row of tiles, where pairs
along M could not be formed at all; (3) it is the TF32 cluster probe's
scheme (``tf32_cluster_kernel.py``, checked on an H100), kept as it is.

How the follower hands a stage back to the leader, whose multicast writes
into the follower's ring: exactly as in ``tf32_cluster_kernel.py`` (its
docstring says why): each of the follower's two consumers adds one to its
own counter in the leader's shared memory (``atomic_scatter_add`` on a
tensor the cluster splits, lowered to ``mapa`` and ``red.shared::cluster``),
and the leader's loader polls both counters until they cover the stage
before it multicasts into it; never Gluon's ``mbarrier.arrive(from_cta=)``
(it arrives the other way, and the TF32 form built on it hung), never one
shared sum (it let one consumer run ahead for another). One thing added:
after its last load the leader's loader waits for the follower's last
hand-backs, so that the leader cannot exit while a ``red`` into its shared
memory is still to come (Triton 3.9 also ends the ``warp_specialize``
region with a cluster barrier, as the PTX shows; the wait does not lean on
that lowering).

Per CTA: two consumer warpgroups, each the 64 rows ``ME`` of the CTA's
128 x 128 tile (``wgmma`` m64n128k16, both operands from shared memory,
fp32 accumulation, one product left in flight while the next is issued),
and a one-warp loader; C is stored in the input dtype. B is read either
row-major (a (K, N) tensor) or K-major (the (N, K) tensor W
of the view B = W.T, its box permuted in shared memory for ``wgmma``).

Needs Triton 3.9 (``tma.async_load(..., multicast=True)``, ``cga_layout``);
only ``f16_cluster.py`` imports this module. As in the TF32 probe the
kernel is written for the cluster: shapes are the pair's, a layout's
``cga_layout`` says how the pair splits a tensor (``[[0, 1]]``: the
follower holds the columns after the leader's; ``[[1, 0]]``: the rows
after; ``[[0, 0]]``: both hold all of it).
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
LOADER_REGS = gl.constexpr(40)
SPLIT_COLS = gl.constexpr([[0, 1]])  # the follower holds the columns after the leader's


@gluon.constexpr_function
def _kmajor(b_layout):
    """Whether B's box is W's (N x K, the pair split along its rows) rather
    than B's own (K x N, split along its columns): read from the layout,
    since a partition's constexpr arguments reach it as runtime values."""
    return list(b_layout.cga_layout[0]) == [1, 0]


@gluon.constexpr_function
def _pair_n(b_block, b_layout):
    """The cluster tile's width: one B box, half of it to each CTA."""
    return b_block[0] if _kmajor(b_layout) else b_block[1]


@gluon.jit
def _tiles(a_desc, b_desc, m, n, k, GROUP_M: gl.constexpr):
    tiles_m = gl.cdiv(m, a_desc.block_type.shape[0])
    tiles_n = gl.cdiv(n, _pair_n(b_desc.block_type.shape, b_desc.layout))
    return tiles_m * tiles_n, tiles_m, GROUP_M * tiles_n, gl.cdiv(k, a_desc.block_type.shape[1])


@gluon.jit
def _wait_for_follower(own_first, own_second, seen_first, seen_second, needed):
    """The leader's poll: both of the follower's consumers have handed back
    ``needed`` K steps (each counted on its own counter)."""
    one_warp: gl.constexpr = gl.BlockedLayout([1], [32], [1], [0], cga_layout=[[0]])
    while seen_first < needed:
        seen_first = pause(gl.max(own_first.load(one_warp), axis=0))
    while seen_second < needed:
        seen_second = pause(gl.max(own_second.load(one_warp), axis=0))
    return seen_first, seen_second


@gluon.jit
def _loader(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first, released_second,
            m, n, k, stride_cm, GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    BLOCK_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    num_tiles, tiles_m, tiles_per_group, k_tiles = _tiles(a_desc, b_desc, m, n, k, GROUP_M)
    step_bytes: gl.constexpr = a_desc.nbytes_per_cta + b_desc.nbytes_per_cta
    leader = rank() == 0
    own_first = released_first.reinterpret(shape=[1], layout=OWN)  # this CTA's counts
    own_second = released_second.reinterpret(shape=[1], layout=OWN)
    seen_first = 0
    seen_second = 0
    i = 0
    for tile in range(gl.program_id(0), num_tiles, PROGRAMS):
        off_m, off_n = tile_parts.tile_origin(
            tile,
            tiles_m,
            tiles_per_group,
            GROUP_M,
            BLOCK_M,
            _pair_n(b_desc.block_type.shape, b_desc.layout),
        )
        for kk in range(k_tiles):
            s = i % STAGES
            phase = ((i // STAGES) & 1) ^ 1
            mbarrier.wait(empty.index(s), phase)  # this CTA's consumers are done with it
            if leader:  # and the follower's, before A is multicast into its ring
                seen_first, seen_second = _wait_for_follower(
                    own_first, own_second, seen_first, seen_second, i - STAGES + 1
                )
            mbarrier.expect(ready.index(s), step_bytes)
            tma.async_load(a_desc, [off_m, kk * BLOCK_K], ready.index(s), a_bufs.index(s),
                           multicast=True)  # fmt: skip
            if _kmajor(b_desc.layout):
                tma.async_load(b_desc, [off_n, kk * BLOCK_K], ready.index(s), b_bufs.index(s))
            else:
                tma.async_load(b_desc, [kk * BLOCK_K, off_n], ready.index(s), b_bufs.index(s))
            i += 1
    if leader:  # no red.shared::cluster may land after the leader has exited
        _wait_for_follower(own_first, own_second, seen_first, seen_second, i)


@gluon.jit
def _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, released_first,
              released_second, m, n, k, stride_cm, GROUP_M: gl.constexpr,
              PROGRAMS: gl.constexpr, VECTOR_STORE: gl.constexpr,
              ME: gl.constexpr):  # fmt: skip
    BLOCK_M: gl.constexpr = a_desc.block_type.shape[0]
    HALF_M: gl.constexpr = BLOCK_M // 2  # this consumer's rows of the tile
    PAIR_N: gl.constexpr = _pair_n(b_desc.block_type.shape, b_desc.layout)
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, PAIR_N // 2, 16],
        cga_layout=SPLIT_COLS,
    )  # fmt: skip
    per_cta: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0], cga_layout=[[1]])
    ONE = gl.full([2], 1, gl.int32, per_cta)
    TO_LEADER = gl.full([2], 0, gl.int32, per_cta)
    FOLLOWER = gl.arange(0, 2, per_cta) == 1  # the element CTA 1 holds
    num_tiles, tiles_m, tiles_per_group, k_tiles = _tiles(a_desc, b_desc, m, n, k, GROUP_M)
    i = 0
    for tile in range(gl.program_id(0), num_tiles, PROGRAMS):
        off_m, off_n = tile_parts.tile_origin(
            tile, tiles_m, tiles_per_group, GROUP_M, BLOCK_M, PAIR_N
        )
        acc = gl.zeros([HALF_M, PAIR_N], gl.float32, acc_layout)
        for kk in range(k_tiles):
            s = i % STAGES
            mbarrier.wait(ready.index(s), (i // STAGES) & 1)
            a_t = a_bufs.index(s).slice(ME * HALF_M, HALF_M)
            if _kmajor(b_desc.layout):  # noqa: SIM108 (a constexpr branch, as the compiler sees it)
                b_t = b_bufs.index(s).permute((1, 0))  # W's N x K box as K x N
            else:
                b_t = b_bufs.index(s)
            acc = warpgroup_mma(a_t, b_t, acc, is_async=True)
            acc = warpgroup_mma_wait(1, deps=[acc])  # the product before this one is done
            if kk > 0:
                _release((i - 1) % STAGES, empty, released_first, released_second, ONE,
                         TO_LEADER, FOLLOWER, ME)  # fmt: skip
            i += 1
        acc = warpgroup_mma_wait(0, deps=[acc])
        _release((i - 1) % STAGES, empty, released_first, released_second, ONE, TO_LEADER,
                 FOLLOWER, ME)  # fmt: skip
        _store_c(c_ptr, acc.to(c_ptr.dtype.element_ty), off_m + ME * HALF_M, off_n, m, n,
                 stride_cm, VECTOR_STORE)  # fmt: skip


@gluon.jit
def _release(s, empty, released_first, released_second, ONE, TO_LEADER, FOLLOWER,
             ME: gl.constexpr):  # fmt: skip
    """Hand stage s back: to this CTA's loader by its mbarrier, and, from the
    follower, to the leader (which multicasts A) by this consumer's count."""
    mbarrier.arrive(empty.index(s))
    if ME == 0:
        released_first.atomic_scatter_add(ONE, TO_LEADER, axis=0, mask=FOLLOWER)
    else:
        released_second.atomic_scatter_add(ONE, TO_LEADER, axis=0, mask=FOLLOWER)


@gluon.jit
def _store_c(c_ptr, acc, off_m, off_n, m, n, stride_cm, VECTOR_STORE: gl.constexpr):
    """Masked store of a consumer's HALF_M x PAIR_N part of the cluster tile
    (the pair's columns split as the accumulator's); with VECTOR_STORE
    through a layout of eight contiguous elements a thread (16 bytes)."""
    c_layout: gl.constexpr = (
        gl.BlockedLayout([1, 8], [2, 16], [4, 1], [1, 0], cga_layout=SPLIT_COLS)
        if VECTOR_STORE
        else acc.type.layout
    )
    if VECTOR_STORE:
        acc = gl.convert_layout(acc, c_layout)
    rows = off_m + gl.arange(0, acc.type.shape[0], layout=gl.SliceLayout(1, c_layout))
    cols = off_n + gl.arange(0, acc.type.shape[1], layout=gl.SliceLayout(0, c_layout))
    at = c_ptr + rows.to(gl.int64)[:, None] * stride_cm + cols.to(gl.int64)[None, :]
    gl.store(at, acc, mask=(rows[:, None] < m) & (cols[None, :] < n))


# One function per consumer, B layout and store: a partition's constexpr
# arguments would reach it as runtime values (as in gluon_tf32).
@gluon.jit
def _c0(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, r0, r1, m, n, k, stride_cm,
        GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, r0, r1, m, n, k, stride_cm,
              GROUP_M, PROGRAMS, False, 0)  # fmt: skip


@gluon.jit
def _c1(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, r0, r1, m, n, k, stride_cm,
        GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, r0, r1, m, n, k, stride_cm,
              GROUP_M, PROGRAMS, False, 1)  # fmt: skip


@gluon.jit
def _c0_vs(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, r0, r1, m, n, k, stride_cm,
           GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, r0, r1, m, n, k, stride_cm,
              GROUP_M, PROGRAMS, True, 0)  # fmt: skip


@gluon.jit
def _c1_vs(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, r0, r1, m, n, k, stride_cm,
           GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, r0, r1, m, n, k, stride_cm,
              GROUP_M, PROGRAMS, True, 1)  # fmt: skip


@gluon.jit
def gemm_f16_cluster(a_desc, b_desc, c_ptr, m, n, k, stride_cm, GROUP_M: gl.constexpr,
                     PROGRAMS: gl.constexpr, STAGES: gl.constexpr,
                     VECTOR_STORE: gl.constexpr):  # fmt: skip
    """C = A @ B (fp16 or bf16; C row-major in that dtype) in clusters of
    two: launch with ``num_warps=4, num_ctas=2`` and PROGRAMS clusters."""
    a_shape: gl.constexpr = [STAGES] + a_desc.block_type.shape  # noqa: RUF005
    b_shape: gl.constexpr = [STAGES] + b_desc.block_type.shape  # noqa: RUF005
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
        gl.warp_specialize([(_c0_vs, args), (_c1_vs, args), (_loader, args)], [4, 1],
                           [CONSUMER_REGS, LOADER_REGS])  # fmt: skip
    else:
        gl.warp_specialize([(_c0, args), (_c1, args), (_loader, args)], [4, 1],
                           [CONSUMER_REGS, LOADER_REGS])  # fmt: skip


def descriptors(a: Any, b: Any, b_kmajor: bool, block_m: int = 128, pair_n: int = 256,
                block_k: int = 64) -> tuple[Any, Any]:  # fmt: skip
    """A's box (block_m x block_k, both CTAs hold it: multicast) and B's, a
    cluster tile pair_n wide, half of its columns to each CTA: from ``b``
    (K, N) row-major, a block_k x pair_n box; with ``b_kmajor`` ``b`` is W,
    (N, K) row-major (the kernel computes A @ W.T), a pair_n x block_k box."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    dtype = {"torch.float16": gl.float16, "torch.bfloat16": gl.bfloat16}[str(a.dtype)]
    a_layout = gl.NVMMASharedLayout.get_default_for([block_m, block_k], dtype,
                                                    cga_layout=[[0, 0]])  # fmt: skip
    b_block, b_split = ([pair_n, block_k], [[1, 0]]) if b_kmajor else ([block_k, pair_n], [[0, 1]])
    b_layout = gl.NVMMASharedLayout.get_default_for(b_block, dtype, cga_layout=b_split)
    return (
        TensorDescriptor.from_tensor(a, [block_m, block_k], a_layout),
        TensorDescriptor.from_tensor(b, b_block, b_layout),
    )
