"""The candidate configurations, as data, and how they are pruned by shape
(what one configuration is: :mod:`.launch_config`).

The lists below are the only place to edit when H200 (or other) measurements
say a candidate is missing or useless: the tuner benchmarks what survives
pruning, and the tuning cache is keyed on a hash of these lists, so an edit
here retunes every shape on its next use.

Two kernel paths (see :mod:`gemmreg_plugins.triton_tuned.kernels`):

- ``tiled``: one program per output tile, pointers with strides; runs
  everywhere (CUDA, ROCm, the CPU interpreter) and is the fallback;
- ``persistent_tma``: one program per SM looping over tiles, operands through
  TMA tensor descriptors; CUDA compute capability >= 9 only;
- ``gluon_ws``: one program per SM, warp-specialised in Gluon (a loader warp,
  two consumer warpgroups, :mod:`.gluon_ws`); Hopper (9.x) only, 16-bit
  operands, A row-major, B row-major or a transposed view;
- ``gluon_tf32``: the same for fp32 as TF32 with A and B row-major, computing
  C^T = B^T A^T so that B is never copied (:mod:`.gluon_tf32`);
- ``split_k``: K cut over several programs per tile, optionally as
  C^T = B^T A^T (swap-AB), for problems whose tiles cannot fill the GPU
  (:mod:`.split_k`); CUDA, any layout. Its candidates are made per problem
  by :mod:`.dispatch`, which also decides who gets them;
- ``tma_split_k``: the same grid with the persistent kernel's TMA tile
  product (:mod:`.tma_split_k`); Hopper, 16-bit inputs, TMA-able strides
  (else the pointer split-K kernel). Candidates from :mod:`.dispatch`;
- ``gemv``: a few rows of A against the weight on the CUDA cores, K cut
  as on the split-K path (:mod:`.gemv`); CUDA, fp16 and bf16, any layout.
  Candidates from :mod:`.dispatch` as well.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs
from gemmreg_plugins.triton_tuned import dispatch, tma_dispatch
from gemmreg_plugins.triton_tuned.config_lists import (
    CUDA_GLUON_TF32,
    CUDA_GLUON_WS,
    CUDA_GLUON_WS_128X128,
    CUDA_PERSISTENT_TMA,
    CUDA_PERSISTENT_TMA_TF32,
    CUDA_TILED,
    INTERPRETER,
    ROCM_TILED,
)
from gemmreg_plugins.triton_tuned.launch_config import GROUP_M, MIN_BLOCK, Config

WIDE_TILE = 128 * 128
"""Tiles below this many outputs never get more than 4 warps."""


TUNE_MIN_VOLUME = 2**24
"""Below M*N*K = 256^3 a call is launch-bound on a GPU: the config is chosen by
rule (the smallest surviving tile) instead of benchmarking candidates, unless
its operands are big (``TUNE_MIN_ELEMENTS``)."""
TUNE_MIN_ELEMENTS = 2**20
"""Operands (A, B and C) of this many elements or more are tuned whatever
M*N*K is: a decode GEMM (1x1024x4096: 4M multiply-adds, under
``TUNE_MIN_VOLUME``) streams 8 MiB of weight, about 2 us at the H200's
bandwidth, and how it streams decides its time; 2 MiB of 16-bit operands
(2^20 elements) stream in about half a microsecond, below a launch's own
cost, so below that the rule's pick is as good as any."""


UNMEASURED: tuple[Config, ...] = CUDA_GLUON_WS_128X128
"""Configs left out of the tuner's lists (:func:`.paths_here.candidates_for`)
unless ``GEMMREG_TRITON_TUNED_UNMEASURED=1``: the Gluon kernel's 128x128 tiles,
right over the whole matrix on an H100
(``evidence/2026-12-05-h100-tf32-conflict-free-and-gluon-128-checks``) but
not yet timed ahead of the other forms at the points they are for (level
with the best at 128x14336x4096 in a probe); and, by :func:`unmeasured`,
tiles in pieces, behind there too. The TF32 Gluon kernel left this list once its
pipelined form had run ``check --full`` and the tuner had taken it at all four
large fp32 shapes on an H100 with the H200's Triton
(``evidence/2026-12-05-h100-tf32-gluon-pipelined-and-rules``), and its ``-vs``
forms once they had done the same at two
(``evidence/2026-12-05-h100-tf32-gluon-vector-store``)."""


def unmeasured(config: Config) -> bool:
    """Whether the tuner leaves ``config`` out by default (``UNMEASURED``, a
    tile in pieces, ``tma_dispatch.TMA_PIECE_TILES``, or the TMA split-K
    path's stream-K, ``tma_dispatch.TMA_STREAM_K_TILES``)."""
    stream_k = config.stream_k and config.path == "tma_split_k"
    return config in UNMEASURED or config.pieces > 1 or stream_k


GLUON_128X128_SHARE = 0.8
"""The Gluon kernel's 128x128 tiles (``CUDA_GLUON_WS_128X128``) are offered to
a problem of the ``split_k`` family (its 128x256 tiles do not fill the SMs)
whose 128x128 tiles give programs to this share of the SMs, one tile each,
K whole: 112 of 132 at 128x14336x4096, 128 at 2048x1024x4096. Below it (32
tiles at 128x4096x4096) three quarters of the SMs would idle, and the
split-K kernels are the candidates there."""


def tuning_volume(m: int, n: int, k: int) -> int:
    """M*N*K as the tuner's rule weighs it (``tuner.choose``'s ``volume``):
    at least ``TUNE_MIN_VOLUME`` where the operands alone are worth tuning
    for (``TUNE_MIN_ELEMENTS``)."""
    volume = m * n * k
    if m * k + k * n + m * n >= TUNE_MIN_ELEMENTS:
        return max(volume, TUNE_MIN_VOLUME)
    return volume


def next_pow2(x: int) -> int:
    return 1 << max(0, x - 1).bit_length()


def for_dtype(config: Config, dtype: str) -> Config:
    """A tiled config for fp32 operands: they take twice the bytes per element,
    so BLOCK_K is halved and a stage takes the shared memory of the 16-bit
    config it comes from. (fp32's TMA configs are a list of their own,
    ``CUDA_PERSISTENT_TMA_TF32``.)"""
    if dtype != "fp32" or config.block_k <= MIN_BLOCK:
        return config
    return attrs.evolve(config, block_k=config.block_k // 2)


def prune(configs: Iterable[Config], m: int, n: int, k: int) -> list[Config]:
    """Fit the candidates to the shape, keeping their order, without duplicates.

    A tiled config whose block exceeds the problem on an axis (rounded up to a
    power of two, at least 16) is shrunk to it: no 256-wide tile for a 64-wide
    problem, small tiles for small problems, and a skinny problem still gets
    candidates. Shrunk tiles below ``WIDE_TILE`` get at most 4 warps. A
    persistent (or Gluon) config that does not fit is dropped instead: TMA
    boxes this small are not what those paths are for.
    """
    caps = (
        max(MIN_BLOCK, next_pow2(m)),
        max(MIN_BLOCK, next_pow2(n)),
        max(MIN_BLOCK, next_pow2(k)),
    )
    kept: list[Config] = []
    for config in configs:
        sizes = (config.block_m, config.block_n, config.block_k)
        if config.path != "tiled":
            if any(size > cap for size, cap in zip(sizes, caps, strict=True)):
                continue
            fitted = config
        else:
            bm, bn, bk = (min(size, cap) for size, cap in zip(sizes, caps, strict=True))
            warps = config.num_warps if bm * bn >= WIDE_TILE else min(config.num_warps, 4)
            fitted = attrs.evolve(config, block_m=bm, block_n=bn, block_k=bk, num_warps=warps)
        if fitted not in kept:
            kept.append(fitted)
    return kept


def smallest(configs: Sequence[Config]) -> Config:
    """The rule for problems too small to tune: the least padded work per
    program (most programs in flight), ties to the earlier candidate."""
    return min(configs, key=lambda c: (c.block_m * c.block_n, c.block_k, configs.index(c)))


def gluon_configs(
    m: int, n: int, family: dispatch.Family | None, num_sms: int | None
) -> tuple[Config, ...]:
    """The Gluon configs of a 16-bit problem, before pruning: the 128x256
    tiles, and the 128x128 ones where ``GLUON_128X128_SHARE`` says."""
    tiles = -(-m // 128) * -(-n // 128)
    if family == "split_k" and num_sms and tiles >= GLUON_128X128_SHARE * num_sms:
        return CUDA_GLUON_WS + CUDA_GLUON_WS_128X128
    return CUDA_GLUON_WS


def candidates(
    kind: str,
    dtype: str,
    m: int,
    n: int,
    k: int,
    tma: bool,
    gluon: bool = False,
    num_sms: int | None = None,
) -> list[Config]:
    """Every config worth benchmarking for one problem on one backend.

    :param kind: the backend, ``cuda`` or ``rocm`` (the CPU uses ``INTERPRETER``).
    :param tma: whether the persistent TMA path may run (Hopper, TMA-able strides).
    :param gluon: whether the Gluon path may run (Hopper, a row-major A, a
        Triton with the Gluon API it is written in); it takes 16-bit inputs only.
    :param num_sms: the GPU's SM count: on CUDA, problems whose tiles cannot
        fill it get split-K candidates first, and problems of a few rows
        GEMV ones after them (:mod:`.dispatch`); None, none.
    """
    base: list[Config] = []
    split: list[Config] = []
    family: dispatch.Family | None = None
    if kind == "cuda" and num_sms is not None:
        family = dispatch.family(m, n, k, num_sms)
        split = dispatch.split_k_candidates(m, n, k, num_sms, dtype, family)
        if tma:  # after the pointer kernel's: the first is what an untuned run takes
            split += tma_dispatch.tma_split_k_candidates(m, n, k, num_sms, dtype, family)
            split += tma_dispatch.tma_piece_candidates(m, n, k, num_sms, dtype, family)
            split += tma_dispatch.tma_stream_k_candidates(m, n, k, num_sms, dtype, family)
        split += dispatch.gemv_candidates(m, n, k, num_sms, dtype)
    if kind == "cuda":
        persistent = CUDA_PERSISTENT_TMA_TF32 if dtype == "fp32" else CUDA_PERSISTENT_TMA
        warp_specialised: tuple[Config, ...] = ()
        if gluon and tma and dtype == "fp32":
            warp_specialised = CUDA_GLUON_TF32
        elif gluon and tma:
            warp_specialised = gluon_configs(m, n, family, num_sms)
        base = [
            *warp_specialised,
            *(persistent if tma else ()),
            *(for_dtype(c, dtype) for c in CUDA_TILED),
        ]
    elif kind == "rocm":
        base = [for_dtype(c, dtype) for c in ROCM_TILED]
    else:
        raise ValueError(f"no candidates for backend {kind!r}")
    return split + prune(base, m, n, k)


def describe_lists() -> str:
    """Every candidate list as text: hashed into the tuning-cache key, so editing
    a list invalidates what was tuned with the old one."""
    lists = {
        "CUDA_TILED": CUDA_TILED,
        "CUDA_PERSISTENT_TMA": CUDA_PERSISTENT_TMA,
        "CUDA_GLUON_WS": CUDA_GLUON_WS,
        "CUDA_GLUON_WS_128X128": CUDA_GLUON_WS_128X128,
        "CUDA_GLUON_TF32": CUDA_GLUON_TF32,
        "CUDA_PERSISTENT_TMA_TF32": CUDA_PERSISTENT_TMA_TF32,
        "ROCM_TILED": ROCM_TILED,
        "INTERPRETER": (INTERPRETER,),
    }
    rules = (
        f"GROUP_M={GROUP_M};TUNE_MIN_VOLUME={TUNE_MIN_VOLUME};"
        f"TUNE_MIN_ELEMENTS={TUNE_MIN_ELEMENTS};WIDE_TILE={WIDE_TILE};"
        f"GLUON_128X128_SHARE={GLUON_128X128_SHARE};{dispatch.describe()};{tma_dispatch.describe()}"
    )
    return rules + ";" + ";".join(f"{k}=" + ",".join(c.name for c in v) for k, v in lists.items())
