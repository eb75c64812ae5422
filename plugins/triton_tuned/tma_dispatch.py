"""The TMA split-K path's candidates (:mod:`.tma_split_k`): its tiles, K cut
as :mod:`.dispatch` cuts it for the pointer kernel, and its tiles in pieces
(:mod:`.tma_pieces_kernel`), each for the ``split_k`` family's 16-bit
problems alone. Apart from :mod:`.dispatch` because they are one path's
measured lists and rules; the family a problem falls in, the split counts
and how a tile list becomes configs stay there."""

from __future__ import annotations

from gemmreg_plugins.triton_tuned.dispatch import (
    MAX_REDUCE_BYTES,
    Family,
    cdiv,
    pow2_at_least,
    split_configs,
)
from gemmreg_plugins.triton_tuned.launch_config import MIN_BLOCK, Config

TMA_SPLIT_TILES: tuple[tuple[int, int, int, int, int], ...] = (
    (64, 64, 128, 6, 4),
    (128, 64, 128, 4, 4),
    (128, 64, 64, 6, 4),
    (128, 128, 128, 3, 8),
    (64, 32, 128, 6, 4),
)
"""The TMA split-K path's tiles (rows, columns, BLOCK_K, stages, warps):
24-64 KB of A and B a stage, 144-192 KB in flight per program, so that one
program per SM keeps enough of the weight in flight to near the HBM
bandwidth. From probes on the H200 at 128 tokens
(``evidence/2026-12-04-h200-tma-split-k-llm-decode/probes``, gemmreg's clock
against torch.mm): 64x64x128 0.93x at 128x4096x4096 (unsplit, 128 programs),
0.99x at 128x1024x4096 (4 splits), 0.96x at 128x4096x14336, where the
pointer kernel's best were 1.09-1.15x; 128x64 tiles in 2 splits 1.01-1.09x;
128x128x128 unsplit (112 programs) 1.05x at 128x14336x4096 (the persistent
kernel's 128x128 tiles 1.10x); 64x32x128 in 2 splits 0.99x at 128x1024x4096.
128x128 tiles at 64 of K, 64x128 tiles, 8 stages and 8 warps were behind; so
were 128x256 and 256x128 tiles in two K ranges on an H100 (1.18x and more at
128x14336x4096, 1.38x and more at 2048x1024x4096;
``evidence/2026-12-06-h100-wide-split-tiles-probe``)."""
TMA_WHOLE_K_SHARE = 0.8
"""An unsplit TMA candidate is timed where its tiles alone give programs to
this share of the SMs: 112 tiles of 128x128 on 132 SMs (128x14336x4096) was
that probe's best there, and ``splits_for``'s ``NEARLY_FULL`` leaves it out."""
TMA_PIECE_TILES: tuple[tuple[int, int, int, int, int], ...] = (
    (128, 64, 128, 3, 8),
    (128, 64, 64, 6, 8),
)
"""The TMA split-K path's tiles in three pieces (rows, the first piece's
columns, BLOCK_K, stages, warps): 64 + 32 + 16 = 112 columns, K whole
(:mod:`.tma_pieces_kernel`). A stage is 128 + 112 rows of BLOCK_K: 60 KB at
128 (3 stages), 30 KB at 64 (6), about what the best unsplit tile at
128x14336x4096 held in flight (128x128x128, 3 stages). Behind on the H200
there (1.06-1.12x ``torch.mm``'s time against the unsplit 128x128x128 tile's
1.00-1.03x, ``evidence/2026-12-05-h200-fp8-tma-and-grouped-probes``): offered only where ``GEMMREG_TRITON_TUNED_UNMEASURED=1``
asks (:func:`.configs.unmeasured`)."""
TMA_STREAM_K_TILES: tuple[tuple[int, int, int, int, int], ...] = ((128, 128, 128, 3, 8),)
"""The tiles the TMA split-K path also shares out by stream-K (rows,
columns, BLOCK_K, stages, warps; :mod:`.tma_stream_k`): the unsplit tile
that ran best where its tiles alone come near to filling the SMs (112 of
them at 128x14336x4096), given every SM instead. Behind on an H100 (1.15x
``torch.mm``'s device time there; ``tma_stream_k``): offered only where
``GEMMREG_TRITON_TUNED_UNMEASURED=1`` asks (:func:`.configs.unmeasured`)."""
TMA_MAX_REDUCE_BYTES = 4 * MAX_REDUCE_BYTES
"""The TMA path's bound on one tile's partials: its tiles (up to 128x128,
64 KiB of fp32 a split) would otherwise get at most two splits, and 128
tokens by 4096 columns in 128x128 tiles is 32 tiles against 132 SMs."""


def tma_split_k_candidates(
    m: int, n: int, k: int, num_sms: int, dtype: str, fam: Family
) -> list[Config]:
    """The TMA split-K configs for one problem (:mod:`.tma_split_k`): the
    ``split_k`` family only (the tiles hold M whole: no swap-AB), 16-bit
    inputs only, tiles past the problem's edges (rounded up to a power of
    two) left out rather than shrunk, as :func:`.configs.prune` treats TMA
    boxes."""
    if fam != "split_k" or dtype == "fp32":
        return []
    caps = (max(MIN_BLOCK, pow2_at_least(m)), max(MIN_BLOCK, pow2_at_least(n)))
    fitted = [tile for tile in TMA_SPLIT_TILES if tile[0] <= caps[0] and tile[1] <= caps[1]]
    return split_configs(
        "tma_split_k", fitted, (m, n), k, num_sms, TMA_MAX_REDUCE_BYTES, TMA_WHOLE_K_SHARE
    )


def tma_piece_candidates(
    m: int, n: int, k: int, num_sms: int, dtype: str, fam: Family
) -> list[Config]:
    """The TMA tiles in pieces for one problem (``TMA_PIECE_TILES``): the
    ``split_k`` family's 16-bit problems where tiles of 112 columns give
    programs to ``TMA_WHOLE_K_SHARE`` of the SMs or more, all in one round,
    and more programs than the 128-column tiles they stand for (so each
    streams less of the weight): 128 programs against 112 at 128x14336x4096
    on 132 SMs. K whole: the pieces are for the shapes that need no split."""
    if fam != "split_k" or dtype == "fp32":
        return []
    kept = []
    for bm, bn, bk, stages, warps in TMA_PIECE_TILES:
        config = Config(
            path="tma_split_k",
            block_m=bm,
            block_n=bn,
            block_k=bk,
            num_stages=stages,
            num_warps=warps,
            pieces=3,
        )
        rows = cdiv(m, bm)
        tiles, whole = rows * cdiv(n, config.columns), rows * cdiv(n, 2 * bn)
        if (
            _fits(m, k, bm, bk)
            and whole < tiles <= num_sms
            and tiles >= TMA_WHOLE_K_SHARE * num_sms
        ):
            kept.append(config)
    return kept


def _fits(m: int, k: int, bm: int, bk: int) -> bool:
    """A tile of ``bm`` rows and ``bk``-deep steps within the problem, each
    rounded up to a power of two (rows to ``MIN_BLOCK`` at least): TMA boxes
    past the edges are left out, not shrunk, as :func:`.configs.prune` does."""
    return bm <= max(MIN_BLOCK, pow2_at_least(m)) and bk <= pow2_at_least(k)


def tma_stream_k_candidates(
    m: int, n: int, k: int, num_sms: int, dtype: str, fam: Family
) -> list[Config]:
    """Stream-K over the TMA split-K path's tiles (``TMA_STREAM_K_TILES``) for
    the ``split_k`` family's 16-bit problems whose tiles, K whole, are fewer
    than the SMs but ``TMA_WHOLE_K_SHARE`` of them or more: each tile is then
    shared by three programs at most. Fewer tiles would be cut finer; split-K
    serves them."""
    if fam != "split_k" or dtype == "fp32":
        return []
    kept = []
    for bm, bn, bk, stages, warps in TMA_STREAM_K_TILES:
        tiles = cdiv(m, bm) * cdiv(n, bn)
        if _fits(m, k, bm, bk) and TMA_WHOLE_K_SHARE * num_sms <= tiles < num_sms:
            kept.append(
                Config(
                    path="tma_split_k",
                    block_m=bm,
                    block_n=bn,
                    block_k=bk,
                    num_stages=stages,
                    num_warps=warps,
                    stream_k=True,
                )
            )
    return kept


def describe() -> str:
    """The tile lists and rules as text, for the tuning cache's key."""
    return (
        f"TMA_SPLIT_TILES={TMA_SPLIT_TILES};TMA_MAX_REDUCE_BYTES={TMA_MAX_REDUCE_BYTES};"
        f"TMA_WHOLE_K_SHARE={TMA_WHOLE_K_SHARE};TMA_PIECE_TILES={TMA_PIECE_TILES};"
        f"TMA_STREAM_K_TILES={TMA_STREAM_K_TILES}"
    )
