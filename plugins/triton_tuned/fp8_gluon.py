"""The warp-specialised fp8 GEMM for Hopper, in Gluon: e4m3 A (row-major)
and B (a transposed view of a row-major N x K weight, K-major as fp8
``wgmma`` must read it), rowwise or per-tensor scales, C in bf16, fp16 or
fp32; its launch is :func:`run_gluon_kernel`, which :func:`.fp8.run` calls
for a Gluon config.

Why a kernel of its own: the Triton kernel of :mod:`.fp8_kernel` promotes
through ``tl.dot(..., max_num_imprecise_acc=BLOCK_K)``, which Triton lowers
as a ``wgmma`` into a zeroed partial sum, a wait for *every* group in
flight, and an add. Each K step then stalls the tensor cores while both
warpgroups wait and add, and on the H200 that kernel ran at 0.53-0.72x of
``torch._scaled_mm`` from 2048 rows up
(``scripts/probes/fp8_grouped_configs.py``). Here each consumer keeps two
partial sums: while the ``wgmma`` of step i writes one, the sum of step
i-1 is waited for (one group left in flight) and added into the fp32
accumulator. The promotion is the same, every 128 of K, as cuBLASLt's
without fast accumulation; the tensor cores are fed across it.

The roles and the loader are :mod:`.gluon_ws`'s (one loader warp, two
consumer warpgroups each taking half of a tile's rows, a ring of
``STAGES`` buffers with *ready* and *empty* barriers). The K loop takes two
steps a turn, so that each partial sum comes back to its own registers:
swapped every step, they took moves into ``wgmma``'s accumulators, and
ptxas serialised every ``wgmma`` (its C7515 note; the CPU test reads it).
Tiles are 128 x 128
(each consumer 64 x 128: the accumulator and two partial sums are 192
registers of the 232 it has); 128 x 256 would need 384.
"""

from typing import TYPE_CHECKING, Any

from gemmreg_plugins.triton_tuned import gluon_ws, tile_parts, tma_rules
from gemmreg_plugins.triton_tuned.dispatch import cdiv
from gemmreg_plugins.triton_tuned.launchers import persistent_programs
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
    from gemmreg_plugins.triton_tuned.fp8 import Fp8Config


@gluon.jit
def _loader(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, sa_ptr, sb_ptr,
            m, n, k, stride_sa, stride_sb, GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr):  # fmt: skip
    gluon_ws._loader(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, m, n, k,
                     GROUP_M, PROGRAMS)  # fmt: skip


@gluon.jit
def _issue(a_bufs, b_bufs, ready, i, STAGES: gl.constexpr, ME: gl.constexpr, partial):
    """K step ``i``'s wgmma into ``partial``'s registers (its value unused),
    once the step's stage has landed; left in flight."""
    s = i % STAGES
    mbarrier.wait(ready.index(s), (i // STAGES) & 1)
    return warpgroup_mma(a_bufs.index(2 * s + ME), b_bufs.index(s), partial, use_acc=False,
                         is_async=True)  # fmt: skip


@gluon.jit
def _promote(acc, pending, empty, i, STAGES: gl.constexpr, LEFT: gl.constexpr):
    """Wait until ``LEFT`` groups are in flight (the one of step ``i - 1``,
    ``pending``, done), hand its stage back, and add its partial sum into the
    fp32 accumulator; returns the sum and the partial's registers for reuse."""
    done = warpgroup_mma_wait(LEFT, deps=[pending])
    mbarrier.arrive(empty.index((i + STAGES - 1) % STAGES))
    return acc + done, done


@gluon.jit
def _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, sa_ptr, sb_ptr,
              m, n, k, stride_sa, stride_sb, GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr,
              ME: gl.constexpr):  # fmt: skip
    """Consumer ``ME`` (0 or 1): the ``ME``-th half of every tile's rows."""
    BOX_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    STAGES: gl.constexpr = b_bufs.type.shape[0]
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_N, 32]
    )
    num_tiles, tiles_m, tiles_per_group, k_tiles = gluon_ws._tiles(a_desc, c_desc, m, n, k, GROUP_M)
    c_buf = c_bufs.index(ME)
    i = 0
    for tile in range(gl.program_id(0), num_tiles, PROGRAMS):
        off_m, off_n = tile_parts.tile_origin(
            tile, tiles_m, tiles_per_group, GROUP_M, 2 * BOX_M, BLOCK_N
        )
        acc = gl.zeros([BOX_M, BLOCK_N], gl.float32, acc_layout)
        spare = gl.zeros([BOX_M, BLOCK_N], gl.float32, acc_layout)
        pending = _issue(a_bufs, b_bufs, ready, i, STAGES, ME,
                         gl.zeros([BOX_M, BLOCK_N], gl.float32, acc_layout))  # fmt: skip
        i += 1
        # Two K steps a turn, so that each partial sum comes back to the same
        # registers: swapping them every step would take moves into wgmma's
        # accumulators, and ptxas then serialises every wgmma.
        for _ in range((k_tiles - 1) // 2):
            other = _issue(a_bufs, b_bufs, ready, i, STAGES, ME, spare)
            acc, done = _promote(acc, pending, empty, i, STAGES, 1)
            pending = _issue(a_bufs, b_bufs, ready, i + 1, STAGES, ME, done)
            acc, spare = _promote(acc, other, empty, i + 1, STAGES, 1)
            i += 2
        if (k_tiles - 1) % 2 == 1:
            other = _issue(a_bufs, b_bufs, ready, i, STAGES, ME, spare)
            acc, done = _promote(acc, pending, empty, i, STAGES, 1)
            acc, done = _promote(acc, other, empty, i + 1, STAGES, 0)
            i += 1
        else:
            acc, done = _promote(acc, pending, empty, i, STAGES, 0)
        rows = off_m + ME * BOX_M + gl.arange(0, BOX_M, layout=gl.SliceLayout(1, acc_layout))
        cols = off_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, acc_layout))
        # Per-tensor scales come with strides 0: every row reads the one scale
        # (Gluon's partitions take no scalar loads from global memory).
        scale_a = gl.load(sa_ptr + rows.to(gl.int64) * stride_sa, mask=rows < m, other=0.0)
        scale_b = gl.load(sb_ptr + cols.to(gl.int64) * stride_sb, mask=cols < n, other=0.0)
        acc = acc * gl.expand_dims(scale_a, 1) * gl.expand_dims(scale_b, 0)
        tma.store_wait(0)  # my previous store has left c_buf
        c_buf.store(acc.to(c_desc.dtype))
        fence_async_shared()
        gluon_ws._tma_store(c_desc, [off_m + ME * BOX_M, off_n], c_buf)
    tma.store_wait(0)


@gluon.jit
def _first_consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, sa_ptr,
                    sb_ptr, m, n, k, stride_sa, stride_sb, GROUP_M: gl.constexpr,
                    PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, sa_ptr, sb_ptr,
              m, n, k, stride_sa, stride_sb, GROUP_M, PROGRAMS, 0)  # fmt: skip


@gluon.jit
def _second_consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, sa_ptr,
                     sb_ptr, m, n, k, stride_sa, stride_sb, GROUP_M: gl.constexpr,
                     PROGRAMS: gl.constexpr):  # fmt: skip
    _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, sa_ptr, sb_ptr,
              m, n, k, stride_sa, stride_sb, GROUP_M, PROGRAMS, 1)  # fmt: skip


@gluon.jit
def gemm_fp8_gluon(a_desc, b_desc, c_desc, sa_ptr, sb_ptr, m, n, k, stride_sa, stride_sb,
                   GROUP_M: gl.constexpr, PROGRAMS: gl.constexpr, STAGES: gl.constexpr):  # fmt: skip
    """C = (scale_a * A) @ (B * scale_b) in tiles of 2*BOX_M x BLOCK_N: A in
    BOX_M x BLOCK_K boxes, B^T (the N x K weight) in BLOCK_N x BLOCK_K, C in
    BOX_M x BLOCK_N (:func:`descriptors`). Launch with ``num_warps=4`` and
    one program per SM at most."""
    # B is always the transposed weight: its boxes go to K-major buffers.
    a_bufs, b_bufs, c_bufs, ready, empty = gluon_ws.shared_ring(a_desc, b_desc, c_desc, STAGES,
                                                                True)  # fmt: skip
    args = (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, sa_ptr, sb_ptr,
            m, n, k, stride_sa, stride_sb, GROUP_M, PROGRAMS)  # fmt: skip
    gl.warp_specialize(
        [(_first_consumer, args), (_second_consumer, args), (_loader, args)],
        [4, 1],
        [gluon_ws.CONSUMER_REGS, gluon_ws.LOADER_REGS],
    )


C_TYPES = {"torch.bfloat16": "bfloat16", "torch.float16": "float16", "torch.float32": "float32"}


def descriptors(
    a: "torch.Tensor", b: "torch.Tensor", out: "torch.Tensor", block_m: int, block_n: int,
    block_k: int,
) -> tuple[Any, ...]:  # fmt: skip
    """Host-side TMA descriptors: A in boxes of half a tile's rows, B through
    the N x K weight it views, C in its own dtype's boxes of half a tile."""
    rows = block_m // 2
    a_desc, b_desc = tma_rules.operand_descriptors(
        a, b, False, True, rows, block_n, block_k,
        lambda t, box: gluon_ws.host_descriptor(t, box, gl.float8e4nv),
    )  # fmt: skip
    c_type = getattr(gl, C_TYPES[str(out.dtype)])
    return a_desc, b_desc, gluon_ws.host_descriptor(out, [rows, block_n], c_type)


def run_gluon_kernel(
    config: "Fp8Config", rowwise: bool, a: "torch.Tensor", b: "torch.Tensor",
    out: "torch.Tensor", scale_a: "torch.Tensor", scale_b: "torch.Tensor", num_sms: int,
) -> Any:  # fmt: skip
    """One launch of :func:`gemm_fp8_gluon` in ``config``'s tiles, persistent
    over at most ``num_sms`` programs: C = (scale_a * A) @ (B * scale_b)."""
    m, k = a.shape
    n = b.shape[1]
    descs = descriptors(a, b, out, config.block_m, config.block_n, config.block_k)
    tiles = cdiv(m, config.block_m) * cdiv(n, config.block_n)
    programs = persistent_programs(tiles, num_sms)
    return gemm_fp8_gluon[(programs,)](
        *descs,
        scale_a,
        scale_b,
        m,
        n,
        k,
        scale_a.stride(0) if rowwise else 0,
        scale_b.stride(1) if rowwise else 0,
        GROUP_M=config.group_m,
        PROGRAMS=programs,
        STAGES=config.num_stages,
        num_warps=4,
    )
