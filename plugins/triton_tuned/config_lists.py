"""The candidate configs of each kernel path and backend, as data: what the
tuner may benchmark. :mod:`.configs` prunes them to a problem and chooses
which lists a problem gets; the tuner ranks what is left."""

from __future__ import annotations

from gemmreg_plugins.triton_tuned.launch_config import GROUP_M, Config


def _tiled(bm: int, bn: int, bk: int, stages: int, warps: int) -> Config:
    return Config(
        path="tiled", block_m=bm, block_n=bn, block_k=bk, num_stages=stages, num_warps=warps
    )


def _tma(
    bm: int,
    bn: int,
    bk: int,
    stages: int,
    warps: int,
    flatten: bool = False,
    ws: bool = False,
    split: int = 1,
    persistent: bool = True,
    group_m: int = GROUP_M,
    transpose_b: bool = False,
    stream_k: bool = False,
) -> Config:
    return Config(
        path="persistent_tma",
        block_m=bm,
        block_n=bn,
        block_k=bk,
        num_stages=stages,
        num_warps=warps,
        flatten=flatten,
        ws=ws,
        epilogue_parts=split,
        persistent=persistent,
        group_m=group_m,
        transpose_b=transpose_b,
        stream_k=stream_k,
    )


def _gluon(
    bm: int,
    bn: int,
    bk: int,
    stages: int,
    group_m: int = GROUP_M,
    tf32: bool = False,
    vector_store: bool = False,
) -> Config:
    return Config(
        path="gluon_tf32" if tf32 else "gluon_ws",
        block_m=bm,
        block_n=bn,
        block_k=bk,
        num_stages=stages,
        num_warps=4,
        group_m=group_m,
        vector_store=vector_store,
    )


# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps) for 16-bit inputs; fp32
# halves BLOCK_K of the tiled ones (see ``for_dtype``) and has TMA configs of its own.
CUDA_TILED: tuple[Config, ...] = (
    _tiled(128, 256, 64, 3, 8),
    _tiled(128, 256, 64, 4, 8),
    _tiled(256, 128, 64, 3, 8),
    _tiled(128, 128, 64, 4, 4),
    _tiled(128, 128, 32, 4, 4),
    _tiled(64, 128, 64, 4, 4),
    _tiled(64, 64, 64, 4, 4),
    _tiled(32, 64, 32, 4, 4),
    _tiled(16, 64, 64, 4, 4),
)
CUDA_PERSISTENT_TMA: tuple[Config, ...] = (
    _tma(128, 256, 64, 3, 8, flatten=True),
    _tma(128, 256, 64, 3, 8, flatten=True, ws=True),
    _tma(128, 256, 64, 3, 8, flatten=True, ws=True, split=2),
    _tma(128, 256, 64, 4, 8, flatten=True, split=2),
    _tma(128, 256, 64, 4, 8, flatten=True, ws=True, split=2),
    _tma(128, 256, 64, 3, 8),
    _tma(128, 256, 64, 3, 8, persistent=False),
    _tma(128, 256, 64, 3, 8, persistent=False, group_m=16),
    _tma(128, 128, 64, 4, 8, flatten=True),
    _tma(128, 256, 64, 3, 8, flatten=True, group_m=16),
    _tma(128, 256, 64, 3, 8, flatten=True, ws=True, split=2, group_m=16),
    _tma(128, 256, 64, 3, 8, flatten=True, group_m=16, stream_k=True),
    _tma(128, 128, 64, 5, 8, split=2),
    _tma(128, 128, 64, 6, 4, split=2),
)
"""Hopper only. From two probes on the H200 (do_bench medians against torch.mm,
fp16/bf16 at 4096^3, 8192^3, 8192x14336x4096, 8192x4096x14336): no single
config won everywhere; each of these was best or within 2% of best somewhere.
The two with ``group_m=16`` were added from a third probe whose output was
not kept. An interleaved probe of this list
(``evidence/2026-12-01-h200-tuner-interleaved-rounds/c2/interleave.log.gz``, L2 flushed, the
same four shapes) ranked them within 0.5% of the best flat config everywhere;
it put the flat 128x256 configs ahead at all eight points, the non-flat and
one-program-per-tile ones 1-5% behind them, and 128x128 tiles 8-12% behind.
Those stay for shapes not probed; the tuner times every candidate in
interleaved rounds (:mod:`.interleaving`), where a 1% gap is told apart.
Warp specialisation (``ws``) compiled and ran on the H200 with Triton 3.6,
to the very binary its config compiles to without it wherever both are
listed (``evidence/2026-12-02-h200-tuner-order-bias/same-binary.txt``): the tuner
times such twins once (``tuner.tune``), and they stay for a Triton that
specialises. Triton 3.6 specialises only with 4 warps (Hopper's pass returns
at once for 8); every such form tried (non-flat loops, C through pointers or
an in-kernel descriptor) hung on its first launch on the H200
(``evidence/2026-12-02-h200-gluon-warp-specialised/p3``), so none is listed: the
specialised kernel is the Gluon one (``CUDA_GLUON_WS``). A 4-stage 128x256x64 tile fits the 227 KB of shared memory
only with the split epilogue. The 5-stage 128x128x64 tile with the split epilogue was
the nearest to cuBLAS of every kernel probed at 2048x1024x4096 and 128x14336x4096
(bf16, 1.04x torch.mm's time on gemmreg's clock:
``evidence/2026-12-04-h200-llm-projections/probe``), where the tiles leave SMs idle.
At 6 stages and 4 warps (one warpgroup: 128 accumulator registers a thread) it
led the 8-warp form there in 30 interleaved rounds on an H100, bf16 and fp16:
0.996x and 1.003x ``torch.mm``'s speed at 2048x1024x4096 against 0.971x and
0.969x, 0.982x and 0.981x at 128x14336x4096 against 0.973x
(``evidence/2026-12-07-h100-llm-bf16-20-points-and-tile-rounds``). Once listed, the
tuner took it at 2048x1024x4096 (0.4% ahead of the 8-warp form in its own
timing), and the bench there stayed SLOWER (0.9726x bf16, 0.9812x fp16).

The ``stream_k`` config (:mod:`.stream_k`) is the best of the four tried at
8192x14336x4096 in an interleaved probe on the H200
(``evidence/2026-12-01-h200-stream-k-tail/s1/sk_probe.log.gz``: one call per
variant per round, L2 flushed), where each stream-K form led
its whole-round form at 8192x14336x4096 (by 0.6-1.7%, level with cuBLAS)
and at 8192^3 (0.4-1.0%), and was far behind at 4096^3 and 8192x4096x14336
(7-16%: the tail there is a quarter to a half of the work, and its K steps
ran 1.5-1.8x slower than the rounds' ones). The tuner's own bursts
(``s3/choices.txt``) ranked every stream-K form behind the best whole-round
one at all eight points, and ``gemmreg bench`` with it forced (``s4``) had it
faster under graph replay (8192^3 1.031-1.033x of cuBLAS, against about
1.02x without it; 8192x14336x4096 bf16 1.006x, against 0.98x) but behind
end to end (0.945-0.983x); so one form stays, for the tuner
to weigh, and three are left out."""
CUDA_GLUON_WS: tuple[Config, ...] = (
    _gluon(128, 256, 64, 3),
    _gluon(128, 256, 64, 3, group_m=16),
)
"""Hopper, fp16/bf16, row-major A, B row-major or a transposed view of a
row-major N x K weight (:mod:`.gluon_ws`): 128x256 tiles
(each consumer a 64x256 half), 3 stages of 48 KB beside two 32 KB C buffers.
A probe on the H200 (``evidence/2026-12-02-h200-gluon-warp-specialised/p4``: one call per
variant per round, L2 flushed, beside torch.mm) put these two 0.2-0.7% ahead
of cuBLAS at 4096^3, 2.7-3.0% at 8192^3, level (0.998-1.003x) at the two
14336-wide shapes, and ahead of the persistent kernel's usual winner at all
eight points (by 0.3-2.1%). 256x128 tiles ran 2-10% behind cuBLAS there and
are left out, as is the ping-pong form (see :mod:`.gluon_ws`). That probe
had B row-major; with B a transposed view (each stage's B one box of the
weight, read K-major by ``wgmma``) they are offered where they fill the GPU
(``paths_here.transposed_view_offered``: timed there on an H100 only)."""
CUDA_GLUON_WS_128X128: tuple[Config, ...] = (
    _gluon(128, 128, 64, 4),
    _gluon(128, 128, 64, 6),
    _gluon(128, 128, 128, 3),
)
"""The Gluon kernel in 128x128 tiles (each consumer a 64x128 half: 64
accumulator registers a thread), for problems whose 128x256 tiles leave SMs
idle while 128x128 ones nearly fill them (``configs.GLUON_128X128_SHARE``):
128x14336x4096 (112 tiles on 132 SMs) and 2048x1024x4096 (128). A stage is
32 KB at BLOCK_K 64 (4 or 6 stages: 160 or 224 KB with the two 16 KB C
buffers) or 64 KB at 128 (3: 224 KB): the deep ring is what a problem that
streams its weight once needs. Compiled for sm_90 without spills, within
227 KB of shared memory (``tests/test_triton_tuned_gluon.py``); each passed
``check --full`` on an H100, and they stay ``configs.UNMEASURED`` until a
bench on the H200 ranks them (5 stages at BLOCK_K 64 may be named to it as
an extra)."""
CUDA_GLUON_TF32: tuple[Config, ...] = (
    _gluon(256, 128, 32, 4, tf32=True, vector_store=True),
    _gluon(256, 128, 32, 4, tf32=True),
    _gluon(256, 128, 32, 3, tf32=True, vector_store=True),
    _gluon(256, 128, 32, 3, tf32=True),
    _gluon(128, 256, 32, 4, tf32=True),
    _gluon(128, 256, 32, 3, tf32=True),
)
"""Hopper, fp32 as TF32 with A and B row-major: the Gluon kernel of
:mod:`.gluon_tf32`, C^T = B^T A^T with B^T in ``wgmma``'s register operand,
so B is never copied K-major. 128x256 tiles, as cuBLAS's TF32 kernel takes
at 4096^3 and 8192^3 (``tilesize128x256x32``, ``report --kernels`` of
``evidence/2026-12-04-h200-llm-fp16-fp8-tf32/tf32``); a stage is 48 KB (A's
16, B's two halves 32), so 4 stages take 192 KB and no C buffer is kept (C
is stored from registers). Compiled for sm_90 without spills, each K step's
``wgmma`` pipelined (``tests/test_triton_tuned_gluon_tf32.py``). The
kernel's first form, whose ``wgmma`` ptxas serialised, was right over the
whole fp32 matrix on the H200 but 0.7966x and 0.7703x cuBLAS's TF32 at
4096^3 and 8192^3 (``evidence/2026-12-05-h200-fp8-tma-and-grouped-probes``);
this one passed ``check --full`` with each config named on an H100 (Triton
3.6), where the tuner took 4 stages over the copy route at all four large
shapes and it ran 0.9603x and 0.9308x cuBLAS's TF32 untuned
(``evidence/2026-12-05-h100-tf32-gluon-pipelined-and-rules``).

The 256x128 forms come first: they split the tile the other way, as
cuBLAS's TF32 kernel does where it is ahead, and ran ahead of the 128x256
ones on the H100, where the tuner took them at three of the four large
shapes (how, and the figures: :mod:`.gluon_tf32`;
``evidence/2026-12-05-h100-tf32-gluon-256x128``). The split loads half as
much B^T into registers a K step (16 values a thread, not 32); the shared
memory read by ``wgmma`` and the stage's size are the same.

The ``-vs`` forms store C 16 bytes a thread (four whole 128-byte lines a
warp, a quarter of the store instructions), the accumulator first converted
through 32 KiB more of shared memory (224 KiB at 4 stages, within the 227
KiB a CTA may have). Why: a form whose C store wrote half sectors ran 2.8% slower at
4096^3 and 1.3% at 8192^3
(``evidence/2026-12-05-h100-tf32-conflict-free-and-gluon-128-checks``), so
the store is a cost the tensor cores wait through at every tile's end.
On the H100 both passed ``check --full``; named and untuned, the 4-stage one
ran 0.991x cuBLAS's TF32 at 4096^3 where the plain store ran 0.9833x (their
intervals apart), and 0.9526x against 0.9632x at 8192^3 (intervals
overlapping); the tuner, ranking the two in interleaved rounds, took it at
both and the plain store at the two long shapes
(``evidence/2026-12-05-h100-tf32-gluon-vector-store``). So the 4-stage
``-vs`` form leads the list: it is what an untuned run takes."""
CUDA_PERSISTENT_TMA_TF32: tuple[Config, ...] = (
    _tma(128, 256, 32, 3, 8, split=2),
    _tma(128, 256, 32, 3, 8, split=2, group_m=16),
    _tma(128, 256, 32, 3, 8, split=2, persistent=False),
    _tma(128, 256, 32, 4, 8, split=4, persistent=False),
    _tma(128, 256, 32, 3, 8, split=2, transpose_b=True),
    _tma(128, 256, 32, 4, 8, split=4, transpose_b=True),
    _tma(128, 256, 32, 3, 8, split=2, flatten=True, transpose_b=True),
)
"""Hopper, fp32 inputs as TF32. TF32 ``wgmma`` reads shared memory K-major
only, so a row-major B takes one of two routes: through registers, the
kernel computing C^T = B^T A^T (``kernels``' ``TF32_SWAP``, see
``tma_rules.tf32_swap``), or copied K-major first (``transpose_b``, see
:mod:`.transpose`). From H200 probes (do_bench medians against
cuBLAS TF32 at the four shapes above, ``evidence/2026-11-30-h200-tf32-routes/
probes``): the four swapped configs were each best or within 3% of the best
swapped one somewhere; the copy route beat all of them at all four shapes
(``fp32-probe-7-routes.json``), and the swapped ones stay for the shapes where
a pass over B costs more than it saves. A 128x256 fp32 C tile needs its
store split to fit beside 3 or 4 stages. No ``stream_k`` config: in the
stream-K probe above (``s1/sk_probe.log.gz``) the two tried were behind their whole-round
forms at all four shapes (by 0.4-26%).

Left out, measured: 256x128 tiles in the swapped form returned wrong results
with Triton 3.6 on every call (the interpreter computes them right), and so
did other arrangements of the same swapped loop (B loaded before A: every
call; A in two row blocks at 4 stages: some calls). The four swapped configs
here were right on every call of that probe (``probes/fp32-probe-5-races.json``);
every candidate's result is checked when it is tuned, the winner's on 16 more
calls (``tuner.RECHECK_CALLS``)."""
ROCM_TILED: tuple[Config, ...] = (
    _tiled(128, 128, 64, 2, 8),
    _tiled(128, 128, 32, 2, 4),
    _tiled(64, 128, 32, 2, 4),
    _tiled(64, 64, 32, 2, 4),
    _tiled(32, 32, 32, 2, 4),
)
"""AMD: the tiled path only (no TMA), two stages (LDS is smaller), written but
never run here (no AMD GPU)."""
INTERPRETER = _tiled(32, 32, 32, 1, 4)
"""The CPU interpreter: one small fixed config, never tuned (a 512^3 call takes
~16 s there, and its timings say nothing about a GPU)."""
