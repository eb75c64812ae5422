"""The tuning harness's candidates (scripts/tune_grid.py, tune_families.py)
and its suggestions (tune_report.py): the grid stays bounded on an H200 and
covers what each shape class needs. test_tune_run.py runs tune.py itself."""

from __future__ import annotations

import sys
from pathlib import Path

import attrs
import pytest
from gemmreg_splitk import heuristics, tuned

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
TARGET_SHAPES = [(16, 16, 65536), (128, 128, 32768), (64, 4096, 16384), (32, 8192, 8192)]


@pytest.fixture(scope="module")
def grid():
    sys.path.insert(0, str(SCRIPTS))
    try:
        import tune_grid

        yield tune_grid
    finally:
        sys.path.remove(str(SCRIPTS))


@pytest.mark.parametrize("tma", [False, True])
@pytest.mark.parametrize("atomic", [False, True])
def test_the_h200_grid_is_bounded_covers_k_and_fills_the_device(grid, atomic, tma):
    h200 = heuristics.gpu(132)
    total = 0
    for m, n, k in TARGET_SHAPES:
        cands = grid.stage1(m, n, k, atomic, h200, quick=False, broken=False, tma=tma)
        assert cands[0].label == "current"
        assert cands[0].config == heuristics.choose(m, n, k, h200, atomic=atomic)
        total += len(cands)
        for cand in cands:
            c = cand.config
            assert (c.split_k - 1) * c.k_per_split < k <= c.split_k * c.k_per_split
            assert c.k_per_split >= grid.MIN_K_STEPS * c.block_k or cand.label == "current"
        programs = [c.config.tiles(m, n) * c.config.split_k for c in cands[1:]]
        assert max(programs) >= 3 * 132  # the sweep reaches past two programs per SM
        if m <= 32:  # skinny: small tiles are in the sweep
            assert {c.config.block_m for c in cands} <= {16, 32}
    assert total <= STAGE1_BOUND


STAGE1_BOUND = 190
"""Stage 1 of one mode over the four target shapes, TMA twins included (as on
the H200): about 110 before the streaming candidates, whose compiles took
30-50 s on the H200 (in a pool), 144 with them; deterministic mode's wide
trees (fan-in 4 and 8 on atomic mode's tiny and small tiles at three splits)
add 12, so 152; the one-program-per-SM TMA family about 11 per flat shape,
so 174; the reduce-scatter family (one at 16x16x65536, eight at
128x128x32768) 9, so 183. Bounded so the whole sweep stays within minutes."""


@pytest.mark.parametrize("atomic", [False, True])
def test_the_flat_classes_get_streaming_candidates_with_and_without_tma(grid, atomic):
    h200 = heuristics.gpu(132)
    for m, n, k in TARGET_SHAPES:
        cands = grid.stage1(m, n, k, atomic, h200, quick=False, broken=False, tma=True)
        configs = [c.config for c in cands]
        # the grid's own TMA candidates (the "current" first one is whatever tuned.TABLE holds)
        with_tma = [c.config for c in cands if c.config.tma and c.label != "current"]
        if tuned.shape_class(m, n, k) not in grid.STREAMING_CLASSES:
            assert not with_tma
            continue
        streaming = [c for c in with_tma if c.num_warps == grid.tune_families.STREAMING_WARPS]
        assert {c.block_n for c in streaming} == {128, 256}
        assert {c.block_k for c in streaming} == {64, 128}
        for c in streaming:  # each has its pointer twin
            assert attrs.evolve(c, tma=False) in configs
            assert c.swap_ab == (c.block_m < 64)
        assert max(c.num_stages for c in streaming) >= 5  # more bytes in flight than 4 x 64
        # about one program per SM, M covered by one tile, both orientations, TMA only
        one = [c for c in with_tma if c.num_warps == 4]
        assert {(c.block_n, c.block_k) for c in one} == set(grid.tune_families.ONE_PER_SM_TILES)
        for c in one:
            assert c.block_m >= m and {c.swap_ab, not c.swap_ab} <= {x.swap_ab for x in one}
            assert 0.5 * 132 <= c.tiles(m, n) * c.split_k <= 2 * 132
        assert {c.num_stages for c in one} >= {4, 5}
        for c in with_tma:
            assert c.num_stages * (c.block_m + c.block_n) * c.block_k * 2 <= grid.SMEM_LIMIT
            assert (c.split_k - 1) * c.k_per_split < k <= c.split_k * c.k_per_split
    # without the TMA path (pre-Hopper GPUs) the streaming tiles are pointer-only
    # (the "current" pick is tuned.TABLE's, whose knob the plugin ignores where TMA does not run)
    plain = grid.stage1(64, 4096, 16384, atomic, h200, quick=False, broken=False)
    assert not any(c.config.tma for c in plain if c.label != "current")
    assert any(c.config.block_n == 256 for c in plain)


def test_stage_two_toggles_the_load_path_and_the_key_shows_it(grid):
    h200 = heuristics.gpu(132)
    cands = grid.stage1(64, 4096, 16384, False, h200, quick=False, broken=False, tma=True)
    seed = next(c for c in cands if c.config.tma)
    row = grid.describe(seed, 64, 4096, 16384, False)
    assert row["key"].endswith(" tma serial") and row["config"]["tma"] is True
    more = grid.stage2([row], 64, 4096, 16384, False, False, [row], tma=True)
    assert sum(not c.config.tma for c in more) == 1
    stage1 = grid.stage1(64, 4096, 16384, False, h200, quick=False, broken=False)
    plain = next(c for c in stage1 if not c.config.tma)
    row = grid.describe(plain, 64, 4096, 16384, False)
    assert not any(c.config.tma for c in grid.stage2([row], 64, 4096, 16384, False, False, [row]))


def test_stage_two_keeps_a_swapped_seed_swapped_and_tries_it_unswapped(grid):
    h200 = heuristics.gpu(132)
    seed = next(
        c for c in grid.stage1(32, 8192, 8192, True, h200, False, False) if c.config.swap_ab
    )
    row = grid.describe(seed, 32, 8192, 8192, True)
    more = grid.stage2([row], 32, 8192, 8192, True, False, [row])
    assert sum(not c.config.swap_ab for c in more) == 1  # the one toggle
    # atomic adds have no reduction choice; only the fixed orders do
    assert all(c.config.reduce == "serial" for c in more if not c.config.fixed_order)


def test_stage_two_varies_the_reduction_and_pipeline_around_a_seed(grid):
    h200 = heuristics.gpu(132)
    seed = grid.stage1(64, 4096, 16384, False, h200, quick=False, broken=False)[0]
    row = grid.describe(seed, 64, 4096, 16384, False)
    more = grid.stage2([row], 64, 4096, 16384, False, False, [row])
    assert any(c.config.reduce == "tree" for c in more)
    assert {c.config.num_warps for c in more} >= {2, 8}
    assert all(grid.key(c.config, False) != row["key"] for c in more)
    for c in more:
        smem = c.config.num_stages * (c.config.block_m + c.config.block_n) * c.config.block_k * 2
        assert smem <= grid.SMEM_LIMIT


ATOMIC_SMALL = tuned.Tuned(
    block_m=32, block_n=64, block_k=128, programs_per_sm=1.939, num_stages=4, swap_ab=True
)
"""An earlier atomic-mode small-class entry (8 tiles, split 32), pinned so
the wide-tree tests do not depend on what ``tuned.TABLE`` holds today."""


def test_deterministic_mode_tries_wide_trees_on_atomic_modes_tiles_at_high_splits(
    grid, monkeypatch
):
    """128x128x32768: atomic mode's 32x64x128 swapped tile at split 16, 32 and 64,
    each up a fan-in 4 and 8 tree; atomic mode and the flat classes get none."""
    monkeypatch.setitem(tuned.TABLE, ("small", True), ATOMIC_SMALL)
    h200 = heuristics.gpu(132)
    cands = grid.stage1(128, 128, 32768, False, h200, quick=False, broken=False)
    wide = [c.config for c in cands if c.config.fanin != 2]
    assert {(c.split_k, c.fanin) for c in wide} == {(s, f) for s in (16, 32, 64) for f in (4, 8)}
    for c in wide:
        assert (c.block_m, c.block_n, c.block_k, c.swap_ab, c.reduce) == (32, 64, 128, True, "tree")
        assert grid.key(c, False).endswith(f"swapAB tree-f{c.fanin}")
    assert not any(
        c.config.fanin != 2 for c in grid.stage1(128, 128, 32768, True, h200, False, False)
    )
    for m, n, k in TARGET_SHAPES[2:]:
        flat = grid.stage1(m, n, k, False, h200, quick=False, broken=False, tma=True)
        assert not any(c.config.fanin != 2 for c in flat)


def test_stage_two_tries_the_other_fan_ins_at_high_splits_only(grid, monkeypatch):
    monkeypatch.setitem(tuned.TABLE, ("small", True), ATOMIC_SMALL)
    h200 = heuristics.gpu(132)
    cands = grid.stage1(128, 128, 32768, False, h200, quick=False, broken=False)
    seed = next(c for c in cands if c.config.fanin == 8 and c.config.split_k == 32)
    row = grid.describe(seed, 128, 128, 32768, False)
    more = [c.config for c in grid.stage2([row], 128, 128, 32768, False, False, [row])]
    reductions = {(c.reduce, c.fanin) for c in more if c.block_k == 128 and c.num_warps == 4}
    assert reductions >= {("tree", 2), ("tree", 4), ("serial", 2)}
    seed = next(  # a serial seed below the wide trees' split
        c for c in cands if c.config.split_k < grid.FANIN_MIN_SPLIT and c.config.reduce == "serial"
    )
    low = grid.describe(seed, 128, 128, 32768, False)
    more = grid.stage2([low], 128, 128, 32768, False, False, [low])
    assert {c.config.fanin for c in more} == {2}
    assert any(c.config.reduce == "tree" for c in more)


def test_a_winning_wide_tree_is_suggested_with_its_fan_in(grid, monkeypatch):
    import tune_report

    monkeypatch.setitem(tuned.TABLE, ("small", True), ATOMIC_SMALL)
    h200 = heuristics.gpu(132)
    cands = grid.stage1(128, 128, 32768, False, h200, quick=False, broken=False)
    winner = next(c for c in cands if c.config.fanin == 4 and c.config.split_k == 32)
    rows = []
    for ratio, cand in ((0.95, winner), (0.73, cands[0])):
        row = grid.describe(cand, 128, 128, 32768, False)
        row.update(status="ok", ratio=ratio)
        rows.append(row)
    group = {"shape": [128, 128, 32768], "dtype": "fp16", "mode": "splitk", "candidates": rows}
    (line,) = tune_report.suggest([group], 132)
    assert '("small", False): Tuned(block_m=32, block_n=64, block_k=128' in line
    assert 'reduce="tree"' in line and "fanin=4" in line and "swap_ab=True" in line
    assert "programs_per_sm=1.939" in line  # 8 tiles x split 32 on 132 SMs


def test_a_winning_tma_config_is_suggested_with_the_knob(grid):
    import tune_report

    h200 = heuristics.gpu(132)
    cands = grid.stage1(32, 8192, 8192, True, h200, quick=False, broken=False, tma=True)
    rows = []
    winner = next(c for c in cands if c.config.tma and c.label != "current")
    for ratio, cand in ((1.2, winner), (1.0, cands[0])):
        row = grid.describe(cand, 32, 8192, 8192, True)
        row.update(status="ok", ratio=ratio)
        rows.append(row)
    group = {
        "shape": [32, 8192, 8192],
        "dtype": "fp16",
        "mode": "splitk_atomic",
        "candidates": rows,
    }
    (line,) = tune_report.suggest([group], 132)
    assert '("flat32", True): Tuned(' in line and "tma=True" in line and "swap_ab=True" in line


def test_atomic_mode_tries_the_fixed_order_and_a_winner_is_suggested_with_it(grid):
    import tune_report

    h200 = heuristics.gpu(132)
    seed = grid.stage1(64, 4096, 16384, True, h200, quick=False, broken=False, tma=True)[1]
    row = grid.describe(seed, 64, 4096, 16384, True)
    more = grid.stage2([row], 64, 4096, 16384, True, False, [row], tma=True)
    fixed = [c for c in more if c.config.fixed_order]
    assert len(fixed) == 1 and fixed[0].config.reduce == "serial"
    assert attrs.evolve(fixed[0].config, fixed_order=False) == seed.config
    winner = grid.describe(fixed[0], 64, 4096, 16384, True)
    assert winner["key"] == row["key"] + " fixed-order serial"
    back = grid.stage2([winner], 64, 4096, 16384, True, False, [winner], tma=True)
    assert sum(not c.config.fixed_order for c in back) == 1  # and from it, atomics again
    for r, ratio in ((winner, 1.02), (row, 0.99)):
        r.update(status="ok", ratio=ratio)
    group = {"shape": [64, 4096, 16384], "dtype": "fp16", "mode": "splitk_atomic",
             "candidates": [winner, row]}  # fmt: skip
    (line,) = tune_report.suggest([group], 132)
    assert line.startswith('    ("flat64", True): Tuned(')
    assert 'reduce="serial", fixed_order=True' in line


def test_both_modes_try_the_reduce_scatter_on_the_tiny_grids_at_one_program_per_sm(grid):
    """16x16x65536 and 128x128x32768: the reduce-scatter at the highest split
    that keeps every program resident on 132 SMs (it spins only then), in
    atomic mode as its fixed order; never on the flat shapes' many tiles."""
    h200 = heuristics.gpu(132)
    for atomic in (False, True):
        for m, n, k in TARGET_SHAPES:
            cands = grid.stage1(m, n, k, atomic, h200, quick=False, broken=False)
            scat = [c.config for c in cands if c.config.reduce == "scatter"]
            assert bool(scat) == (n <= 128)
            for c in scat:
                assert c.fixed_order == atomic
                assert 66 < c.tiles(m, n) * c.split_k <= 132
        seed = next(  # a seed summing another way, split: stage 2 offers the scatter once
            c
            for c in grid.stage1(128, 128, 32768, atomic, h200, quick=False, broken=False)
            if c.config.split_k > 1 and c.config.reduce == "serial" and not c.config.fixed_order
        )
        row = grid.describe(seed, 128, 128, 32768, atomic)
        more = grid.stage2([row], 128, 128, 32768, atomic, False, [row])
        scatter_keys = {grid.key(c.config, atomic) for c in more if c.config.reduce == "scatter"}
        assert len(scatter_keys) == 1 and scatter_keys.pop().endswith(
            "fixed-order scatter" if atomic else " scatter"
        )


def test_stage_two_tries_one_shallower_and_two_deeper_pipelines_that_fit(grid):
    """128x128x32768 from a 64x64x128 scatter seed at 3 stages (32 KiB each):
    2, 4 and 5 stages; from a 128x128x128 seed at 2 (64 KiB each), only 3, as
    4 would pass ``SMEM_LIMIT``."""
    for (bm, bn, split, stages), depths in [
        ((64, 64, 32, 3), {2, 4, 5}),
        ((128, 128, 128, 2), {3}),
    ]:
        seed = heuristics._finish(bm, bn, 128, split, 32768, 2, num_stages=stages, reduce="scatter")
        row = grid.describe(grid.Candidate(seed, "grid"), 128, 128, 32768, False)
        more = grid.stage2([row], 128, 128, 32768, False, False, [row])
        tried = {
            c.config.num_stages
            for c in more
            if attrs.evolve(c.config, num_stages=stages, reduce_chunk=seed.reduce_chunk) == seed
        }
        assert tried == depths
