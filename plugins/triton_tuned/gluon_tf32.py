"""fp32 as TF32 on Hopper with a row-major B and no copy of it, in Gluon: the
``gluon_ws`` path's kernel for fp32 operands.

Why: TF32 ``wgmma`` reads a shared-memory operand K-major only, and a
row-major B (K x N) is N-major. The persistent kernel's best route copies B
K-major first (``Config.transpose_b``): on the H200 that copy is about the
whole gap to cuBLAS at 4096^3 and 8192^3 (0.911x and 0.9448x,
``evidence/2026-12-04-h200-llm-fp16-fp8-tf32/tf32``; the product alone ran
about as fast as cuBLAS's). ``wgmma``'s first operand may come from
registers in any order, so this kernel computes C^T = B^T A^T: each consumer
loads its half of the B box from shared memory into ``wgmma``'s register
operand (the transposing happens in that load), and A^T, which a row-major
A already holds K-major, is read from shared memory as it lies. The PTX ISA
has ``wgmma`` with ``.tf32`` truncate its inputs itself (as the persistent
kernel's swapped route relies on, ``tma_rules.tf32_swap``).

Roles as in :mod:`.gluon_ws`: a loader warp fills a ring of TMA stages (A's
BLOCK_M x BLOCK_K box, and B's BLOCK_K x BLOCK_N in two halves, one per
consumer); two consumer warpgroups each take one half of the tile's columns.
C^T's accumulator is stored from registers: a thread's values there lie
along C's rows, and a warp's store covers whole 32-byte sectors.

Why each K step's group is waited for whole, with the next step's B^T
loaded while it runs: a ``wgmma`` reads its register operand while it is in
flight, so those registers must outlive it. The kernel's first form left
one group in flight across the wait (as :mod:`.gluon_ws` does with both
operands in shared memory), and its B^T registers died at that wait in the
compiler's eyes; ptxas then serialised every ``wgmma`` (C7512, "insufficient
register resources"), each 64 x 128 x 8 product waited for before the
next, with Triton 3.6's, 3.7's and 3.9's ptxas alike. That form ran right over the
whole fp32 matrix on the H200 and 0.77-0.80x cuBLAS's TF32
(``evidence/2026-12-05-h200-fp8-tma-and-grouped-probes``). Here B^T of
step i + 1 is a value carried into step i + 1, loaded while step i's group
runs, so both live in registers of their own (64 of a thread's); ptxas
issues a step's eight ``wgmma`` back to back, and each consumer's wait
can hide behind the other's group. On an H100 with the H200's Triton this
form was right over the whole fp32 matrix and 0.9603x and 0.9308x cuBLAS's
TF32 at 4096^3 and 8192^3, and the tuner took it over the copy route at all
four large shapes
(``evidence/2026-12-05-h100-tf32-gluon-pipelined-and-rules``).

What does not hold it back: the shared-memory bank conflicts of the B^T
load. Each of those loads is a two-way conflict (the 128-byte swizzle puts K
rows 2j and 2j + 1 of eight consecutive columns in the same banks); a form
that read B's columns in an order free of them was right, and slower on the
same H100 (0.9351x against 0.9618x at 4096^3), its permuted columns costing
C's store whole sectors
(``evidence/2026-12-05-h100-tf32-conflict-free-and-gluon-128-checks``).
What cuBLAS's TF32 kernel does where it is ahead is split its 128x256 tile
the other way: each warpgroup 64 of the 128-wide side by all 256 of the
other. The 256x128 configs do that here: a consumer's accumulator is 64 of
C's columns by 256 of its rows, one 64 x 256 x 8 ``wgmma`` a K slice, and
half the B^T in registers. On the same H100 they ran 0.9841x and 0.9626x
cuBLAS's TF32 at 4096^3 and 8192^3 where the 128x256 tiles ran 0.9574x and
0.9326x (``evidence/2026-12-05-h100-tf32-gluon-256x128``).

Where it stands: under Nsight Compute, which locks the clocks, the 256x128
``-vs`` form takes as many cycles as cuBLAS's TF32 kernel at 8192^3 and
fewer at 4096^3; cuBLAS launches clusters of two CTAs, whose TMA loads can
multicast a box to both, and moves less to L2; run back to back at the
card's 700 W limit this kernel also clocks lower than cuBLAS's
(``evidence/2026-12-05-h100-tf32-cycles-and-clocks``). A probe of that
multicast, this kernel in clusters of two whose leader loads A's box once
for both (``scripts/probes/tf32_cluster_kernel.py``, Triton 3.9's Gluon),
was right and, on an H100 run hard, about a point ahead of this kernel at
8192^3 and two behind at 4096^3
(``evidence/2026-12-05-h100-triton39-gluon-and-tf32-clusters``). It is not
offered here: it needs Triton 3.9 (the H200's is 3.6), and what it bought
is less than the verdicts' gap.
"""

from typing import TYPE_CHECKING, Any

from gemmreg_plugins.triton_tuned import gluon_ws, tile_parts
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    mbarrier,
    warpgroup_mma,
    warpgroup_mma_wait,
)

if TYPE_CHECKING:
    import torch

CONSUMER_REGS = gl.constexpr(232)
"""Registers per consumer thread: a 128 x 128 fp32 accumulator takes 128,
B^T's 128 x 32 register operand 32, twice (the step in flight's and the
next one's; :data:`.gluon_ws.CONSUMER_REGS`)."""
LOADER_REGS = gl.constexpr(24)


@gluon.jit
def _tiles(a_desc, b_desc, m, n, k, GROUP_M: gl.constexpr):
    """The tile count, the tiles in M, the tiles in a group and the K steps,
    alike for the loader and both consumers (a tile is two B boxes wide)."""
    tiles_m = gl.cdiv(m, a_desc.block_type.shape[0])
    tiles_n = gl.cdiv(n, 2 * b_desc.block_type.shape[1])
    return tiles_m * tiles_n, tiles_m, GROUP_M * tiles_n, gl.cdiv(k, a_desc.block_type.shape[1])


@gluon.jit
def _loader(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, m, n, k, stride_cm,
            GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    BLOCK_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    HALF_N: gl.constexpr = b_desc.block_type.shape[1]
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    num_tiles, tiles_m, tiles_per_group, k_tiles = _tiles(a_desc, b_desc, m, n, k, GROUP_M)
    step_bytes: gl.constexpr = a_desc.block_type.nbytes + 2 * b_desc.block_type.nbytes
    i = 0  # K steps loaded so far: the ring's count, the consumers keep the same one
    for tile in range(gl.program_id(0), num_tiles, PROGRAMS):
        off_m, off_n = tile_parts.tile_origin(
            tile, tiles_m, tiles_per_group, GROUP_M, BLOCK_M, 2 * HALF_N
        )
        for kk in range(k_tiles):
            s = i % STAGES
            mbarrier.wait(empty.index(s), ((i // STAGES) & 1) ^ 1)  # its last use is done
            mbarrier.expect(ready.index(s), step_bytes)
            gluon_ws._tma_load(a_desc, [off_m, kk * BLOCK_K], ready.index(s), a_bufs.index(s))
            for half in gl.static_range(2):
                gluon_ws._tma_load(b_desc, [kk * BLOCK_K, off_n + half * HALF_N],
                                   ready.index(s), b_bufs.index(2 * s + half))  # fmt: skip
            i += 1


@gluon.jit
def _b_transposed(b_bufs, ready, i, STAGES: gl.constexpr, ME: gl.constexpr,
                  layout: gl.constexpr):  # fmt: skip
    """Consumer ``ME``'s half of K step ``i``'s B box, once TMA has filled
    it, loaded transposed into ``wgmma``'s register operand (B^T, HALF_N x K)."""
    s = i % STAGES
    mbarrier.wait(ready.index(s), (i // STAGES) & 1)
    return b_bufs.index(2 * s + ME).permute((1, 0)).load(layout)


@gluon.jit
def _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, m, n, k, stride_cm,
              GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr, VECTOR_STORE: gl.constexpr,
              ME: gl.constexpr):  # fmt: skip
    """Consumer ``ME`` (0 or 1): C^T's rows of the ``ME``-th half of every
    tile's columns, all of its rows."""
    BLOCK_M: gl.constexpr = a_desc.block_type.shape[0]
    HALF_N: gl.constexpr = b_desc.block_type.shape[1]
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_M, 8]
    )
    b_t_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=1)
    num_tiles, tiles_m, tiles_per_group, k_tiles = _tiles(a_desc, b_desc, m, n, k, GROUP_M)
    i = 0
    for tile in range(gl.program_id(0), num_tiles, PROGRAMS):
        off_m, off_n = tile_parts.tile_origin(
            tile, tiles_m, tiles_per_group, GROUP_M, BLOCK_M, 2 * HALF_N
        )
        acc = gl.zeros([HALF_N, BLOCK_M], gl.float32, acc_layout)  # C^T's rows: C's columns
        b_next = _b_transposed(b_bufs, ready, i, STAGES, ME, b_t_layout)
        for kk in range(k_tiles):
            s = i % STAGES
            b_t = b_next  # B^T, HALF_N x K, in registers
            a_t = a_bufs.index(s).permute((1, 0))  # A^T, K x BLOCK_M, K-major as it lies
            acc = warpgroup_mma(b_t, a_t, acc, is_async=True)
            if kk + 1 < k_tiles:  # the next step's B^T, loaded while this group runs
                b_next = _b_transposed(b_bufs, ready, i + 1, STAGES, ME, b_t_layout)
            acc, b_t, a_t = warpgroup_mma_wait(0, deps=[acc, b_t, a_t])
            mbarrier.arrive(empty.index(s))  # both operands read: the stage goes back
            i += 1
        # C[m, n] = acc[n, m]; a 256-row tile in two halves of its rows, so
        # that fewer of their addresses are live at once (all of them at once
        # spilled about 470 bytes a thread with Triton 3.6's ptxas; the halves
        # spill 48 bytes outside the K loop with Triton 3.9's, none with 3.6's
        # or 3.7's; quarters spill none with any, not yet run on a GPU)
        if BLOCK_M > 128:
            low, high = acc.reshape([HALF_N, 2, BLOCK_M // 2]).permute((0, 2, 1)).split()
            _store_c_t(c_ptr, low, off_m, off_n + ME * HALF_N, m, n, stride_cm, VECTOR_STORE)
            _store_c_t(c_ptr, high, off_m + BLOCK_M // 2, off_n + ME * HALF_N, m, n, stride_cm,
                       VECTOR_STORE)  # fmt: skip
        else:
            _store_c_t(c_ptr, acc, off_m, off_n + ME * HALF_N, m, n, stride_cm, VECTOR_STORE)


@gluon.jit
def _store_c_t(c_ptr, acc, off_m, off_n, m, n, stride_cm, VECTOR_STORE: gl.constexpr):
    """C[off_m + i, off_n + j] = acc[j, i] within C's edges. As ``wgmma``
    left it, a thread's values lie along C's columns, 4 bytes each, and a
    warp's store writes four 32-byte sectors; with ``VECTOR_STORE`` the tile
    is first converted (through shared memory, Triton's layout conversion)
    so that a thread holds 4 consecutive values of a row of C: 16 bytes a
    thread, four whole 128-byte lines a warp, a quarter of the store
    instructions. Offsets in int64 before they meet a stride."""
    # with VECTOR_STORE, C^T's rows (C's columns): 4 of them a thread, 32 a warp
    c_layout: gl.constexpr = (
        gl.BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1]) if VECTOR_STORE else acc.type.layout
    )
    if VECTOR_STORE:
        acc = gl.convert_layout(acc, c_layout)
    cols = off_n + gl.arange(0, acc.type.shape[0], layout=gl.SliceLayout(1, c_layout))
    rows = off_m + gl.arange(0, acc.type.shape[1], layout=gl.SliceLayout(0, c_layout))
    at = c_ptr + rows.to(gl.int64)[None, :] * stride_cm + cols.to(gl.int64)[:, None]
    gl.store(at, acc, mask=(rows[None, :] < m) & (cols[:, None] < n))


# One function per consumer and store: a partition's constexpr arguments
# would reach it as runtime values (:mod:`.gluon_ws`).
@gluon.jit
def _first_consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, m, n, k, stride_cm,
                    GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, m, n, k, stride_cm,
              GROUP_M, PROGRAMS, False, 0)  # fmt: skip


@gluon.jit
def _second_consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, m, n, k, stride_cm,
                     GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, m, n, k, stride_cm,
              GROUP_M, PROGRAMS, False, 1)  # fmt: skip


@gluon.jit
def _first_consumer_vector_store(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, m, n, k,
                                 stride_cm, GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, m, n, k, stride_cm,
              GROUP_M, PROGRAMS, True, 0)  # fmt: skip


@gluon.jit
def _second_consumer_vector_store(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, m, n, k,
                                  stride_cm, GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, m, n, k, stride_cm,
              GROUP_M, PROGRAMS, True, 1)  # fmt: skip


@gluon.jit
def gemm_gluon_tf32(a_desc, b_desc, c_ptr, m, n, k, stride_cm, GROUP_M: gl.constexpr,
                    PROGRAMS: gl.constexpr, STAGES: gl.constexpr, VECTOR_STORE: gl.constexpr):  # fmt: skip
    """C = A @ B for fp32 A (M x K) and B (K x N), both row-major, C row-major,
    as TF32, in tiles of BLOCK_M x 2*HALF_N: A comes in BLOCK_M x BLOCK_K
    boxes, B in BLOCK_K x HALF_N (:func:`descriptors`). Launch with
    ``num_warps=4`` and one program per SM at most. ``VECTOR_STORE``: C is
    stored 16 bytes a thread (:func:`_store_c_t`)."""
    a_bufs = gl.allocate_shared_memory(
        a_desc.dtype,
        [STAGES] + a_desc.block_type.shape,  # noqa: RUF005 (the JIT takes no starred items)
        a_desc.layout,
    )
    b_bufs = gl.allocate_shared_memory(
        b_desc.dtype,
        [2 * STAGES] + b_desc.block_type.shape,  # noqa: RUF005
        b_desc.layout,
    )
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)  # the loader's expect; TMA's bytes
        mbarrier.init(empty.index(s), count=2)  # both consumers done with the stage
    args = (a_desc, b_desc, c_ptr, a_bufs, b_bufs, ready, empty, m, n, k, stride_cm, GROUP_M,
            PROGRAMS)  # fmt: skip
    if VECTOR_STORE:
        gl.warp_specialize(
            [
                (_first_consumer_vector_store, args),
                (_second_consumer_vector_store, args),
                (_loader, args),
            ],
            [4, 1],
            [CONSUMER_REGS, LOADER_REGS],
        )
    else:
        gl.warp_specialize(
            [(_first_consumer, args), (_second_consumer, args), (_loader, args)],
            [4, 1],
            [CONSUMER_REGS, LOADER_REGS],
        )


def descriptors(
    a: "torch.Tensor",  # quoted: no ``from __future__ import annotations`` beside jit code
    b: "torch.Tensor",
    block_m: int,
    block_n: int,
    block_k: int,
) -> tuple[Any, Any]:
    """Host-side TMA descriptors of A (BLOCK_M x BLOCK_K boxes) and B (BLOCK_K
    x BLOCK_N/2: one box per consumer), in :func:`.gluon_ws.shared_layout`."""
    return (
        gluon_ws.host_descriptor(a, [block_m, block_k], gl.float32),
        gluon_ws.host_descriptor(b, [block_k, block_n // 2], gl.float32),
    )
