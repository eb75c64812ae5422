"""How tiles and SPLIT_K are chosen from the shape and the device, or given by the user."""

from __future__ import annotations

import attrs
import pytest
from gemmreg_splitk import heuristics, tuned

H200 = heuristics.gpu(132)
HEURISTIC = heuristics.Target(processors=132, tuned=False)
"""An H200 without the measured table: what the heuristic alone picks."""
TARGET_SHAPES = [(16, 16, 65536), (128, 128, 32768), (64, 4096, 16384), (32, 8192, 8192)]
"""The skinny problems split-K is for: its speed goals against cuBLAS."""
RAGGED_SHAPES = [(3, 5, 7), (65, 67, 69), (20, 24, 700), (1, 64, 1), (130, 70, 65)]


def _configs():
    for target in (HEURISTIC, heuristics.INTERPRETER):
        for m, n, k in TARGET_SHAPES + RAGGED_SHAPES:
            for atomic in (False, True):
                for element_bytes in (2, 4):
                    config = heuristics.choose(
                        m, n, k, target, atomic=atomic, element_bytes=element_bytes
                    )
                    yield (m, n, k), target, atomic, element_bytes, config


def test_a_tiny_output_grid_is_split_many_ways_and_atomic_mode_more():
    det = heuristics.choose(16, 16, 65536, HEURISTIC)
    atomic = heuristics.choose(16, 16, 65536, HEURISTIC, atomic=True)
    assert (det.block_m, det.block_n) == (atomic.block_m, atomic.block_n) == (16, 16)
    # Deterministic: the one program that reduces reads split x 1 KiB of partials,
    # kept under what one program loads (sqrt(65536 * 32 * 2 / 1024) = 64).
    assert det.split_k == 64
    # Atomic mode reduces in L2 as partials arrive: only the K slice's length bounds it.
    assert atomic.split_k == 65536 // heuristics.MIN_K_PER_SPLIT == 128


@pytest.mark.parametrize("shape", TARGET_SHAPES[1:])
@pytest.mark.parametrize("atomic", [False, True])
def test_the_target_shapes_fill_an_h200(shape, atomic):
    m, n, k = shape
    config = heuristics.choose(m, n, k, HEURISTIC, atomic=atomic)
    programs = config.tiles(m, n) * config.split_k
    wanted = heuristics.PROGRAMS_PER_SM * 132
    assert heuristics.FILLED * wanted <= programs <= wanted
    assert config.split_k > 1 and config.split_k & (config.split_k - 1) == 0
    assert k % config.k_per_split == 0  # whole slices: the kernel drops its K masks


def test_skinny_wide_problems_take_wide_tiles():
    assert heuristics.choose(32, 8192, 8192, HEURISTIC).block_m == 32
    config = heuristics.choose(64, 4096, 16384, HEURISTIC)
    assert (config.block_m, config.block_n) == (64, 128)


def test_a_grid_that_fills_the_device_is_not_split():
    assert heuristics.choose(4096, 4096, 4096, HEURISTIC).split_k == 1
    assert heuristics.choose(4096, 4096, 4096, HEURISTIC, atomic=True).split_k == 1


def test_short_k_is_not_split_into_slivers():
    config = heuristics.choose(16, 16, heuristics.MIN_K_PER_SPLIT, HEURISTIC, atomic=True)
    assert config.split_k == 1


def test_every_split_has_work_and_together_they_cover_k():
    for (_, _, k), _, _, _, config in _configs():
        assert config.k_per_split % config.block_k == 0
        assert (config.split_k - 1) * config.k_per_split < k <= config.split_k * config.k_per_split


def test_the_deterministic_reduction_stays_under_one_programs_loads():
    for (m, n, k), target, atomic, element_bytes, config in _configs():
        if atomic or target is not HEURISTIC or config.split_k == 1:
            continue
        reduced = config.split_k * config.block_m * config.block_n * 4
        loaded = config.k_per_split * (config.block_m + config.block_n) * element_bytes
        assert reduced <= heuristics.MAX_REDUCE_TO_LOAD * loaded, (m, n, k, config)


def test_tiles_pipeline_and_reduction_chunks_fit_their_budgets():
    for (m, _n, _k), _, _, element_bytes, config in _configs():
        assert heuristics.MIN_BLOCK <= config.block_m <= heuristics.MAX_BLOCK_M
        assert heuristics.MIN_BLOCK <= config.block_n <= heuristics.MAX_BLOCK_N
        if m <= 16:
            assert config.block_m == 16
        stage = (config.block_m + config.block_n) * config.block_k * element_bytes
        assert heuristics.MIN_STAGES <= config.num_stages <= heuristics.MAX_STAGES
        assert (
            config.num_stages * stage <= heuristics.SMEM_BUDGET_BYTES
            or config.num_stages == heuristics.MIN_STAGES
        )
        chunk = config.reduce_chunk
        assert chunk & (chunk - 1) == 0 and chunk <= max(1, 2 * config.split_k)
        per_thread = chunk * config.block_m * config.block_n / (32 * config.num_warps)
        assert chunk == 1 or per_thread <= heuristics.REDUCE_VALUES_PER_THREAD


def test_the_interpreter_splits_the_matrix_tail_shapes_raggedly():
    """So the CPU correctness matrix runs the reduction, short last slice included."""
    for atomic in (False, True):
        config = heuristics.choose(64, 64, 65, heuristics.INTERPRETER, atomic=atomic)
        assert config.split_k > 1
        assert 65 % config.k_per_split != 0


def test_the_user_can_force_split_k(monkeypatch):
    monkeypatch.setenv(heuristics.SPLIT_K_ENV, "8")
    assert heuristics.choose(4096, 4096, 4096, HEURISTIC).split_k == 8
    monkeypatch.setenv(heuristics.SPLIT_K_ENV, "many")
    with pytest.raises(ValueError, match="positive integer"):
        heuristics.choose(16, 16, 1024, HEURISTIC)


def test_the_user_can_force_tiles_and_pipeline(monkeypatch):
    monkeypatch.setenv(heuristics.CONFIG_ENV, "block_m=16, block_n=64,num_stages=3,split_k=2")
    config = heuristics.choose(64, 4096, 16384, HEURISTIC)
    assert (config.block_m, config.block_n, config.num_stages, config.split_k) == (16, 64, 3, 2)
    for bad, why in [("block_q=16", "unknown field"), ("block_m=24", "power of two"),
                     ("num_warps=0", "positive integer")]:  # fmt: skip
        monkeypatch.setenv(heuristics.CONFIG_ENV, bad)
        with pytest.raises(ValueError, match=why):
            heuristics.choose(16, 16, 1024, HEURISTIC)


def test_the_target_follows_where_the_kernels_run():
    import attrs
    import gemmreg
    from gemmreg_splitk import plugin

    here = gemmreg.where()
    gpu = attrs.evolve(here, triton_interpreted=False, multiprocessors=132)
    assert plugin.target(gpu) == H200
    unknown = attrs.evolve(gpu, multiprocessors=None)
    assert plugin.target(unknown) == heuristics.gpu(heuristics.UNKNOWN_PROCESSORS)
    interpreted = attrs.evolve(gpu, triton_interpreted=True)
    assert plugin.target(interpreted) is heuristics.INTERPRETER


def test_the_h200_launches_the_configs_of_the_table():
    for m, n, k in TARGET_SHAPES:
        for atomic in (False, True):
            entry = tuned.lookup(m, n, k, atomic)
            assert entry is not None, (m, n, k)
            got = heuristics.choose(m, n, k, H200, atomic=atomic)
            assert (got.block_m, got.block_n, got.block_k) == (
                entry.block_m,
                entry.block_n,
                entry.block_k,
            )
            assert (got.num_warps, got.swap_ab) == (entry.num_warps, entry.swap_ab)
            if entry.num_stages is not None:  # None: the kernel's default
                assert got.num_stages == entry.num_stages
            # the split comes back from the entry's programs per SM: the nearest
            # power of two (exactly the measured one, for the tuner's entries)
            programs_per_sm = tuned.programs_per_sm(got.tiles(m, n), got.split_k, 132)
            assert got.split_k == tuned.split_for(entry, got.tiles(m, n), 132)
            assert entry.programs_per_sm / 1.5 <= programs_per_sm <= entry.programs_per_sm * 1.5


def test_each_target_shape_has_its_own_class_and_fp32_keeps_the_heuristic():
    names = [tuned.shape_class(m, n, k) for m, n, k in TARGET_SHAPES]
    assert names == ["tiny", "small", "flat64", "flat32"]
    assert tuned.shape_class(4096, 4096, 4096) is None
    assert tuned.lookup(16, 16, 65536, False, element_bytes=4) is None


def test_a_tuned_split_follows_the_multiprocessor_count(monkeypatch):
    entry = tuned.Tuned(block_m=32, block_n=128, block_k=64, programs_per_sm=3.0, num_stages=3)
    monkeypatch.setitem(tuned.TABLE, ("flat32", True), entry)
    for processors, split in [(132, 8), (66, 4), (264, 16)]:  # 64 tiles, 3 programs per SM
        config = heuristics.choose(32, 8192, 8192, heuristics.gpu(processors), atomic=True)
        assert (config.block_m, config.block_n, config.num_stages) == (32, 128, 3)
        assert config.split_k == split
    # the environment still has the last word
    monkeypatch.setenv(heuristics.CONFIG_ENV, "split_k=2,reduce=tree")
    config = heuristics.choose(32, 8192, 8192, H200, atomic=True)
    assert (config.split_k, config.reduce) == (2, "tree")
    monkeypatch.setenv(heuristics.CONFIG_ENV, "swap_ab=1")
    assert heuristics.choose(32, 8192, 8192, H200).swap_ab is True
    monkeypatch.setenv(heuristics.CONFIG_ENV, "swap_ab=yes")
    with pytest.raises(ValueError, match="swap_ab must be 0 or 1"):
        heuristics.choose(32, 8192, 8192, H200)
    monkeypatch.setenv(heuristics.CONFIG_ENV, "reduce=fast")
    with pytest.raises(ValueError, match="reduce must be one of"):
        heuristics.choose(32, 8192, 8192, H200)


def test_a_measured_config_is_stored_as_programs_per_sm_and_comes_back():
    for tiles, split in [(1, 64), (4, 32), (64, 4), (32, 16)]:
        pps = tuned.programs_per_sm(tiles, split, 132)
        entry = tuned.Tuned(block_m=16, block_n=16, block_k=64, programs_per_sm=pps)
        assert tuned.split_for(entry, tiles, 132) == split


def test_atomic_mode_takes_a_fixed_order_from_its_entry_or_the_environment(monkeypatch):
    entry = tuned.Tuned(
        block_m=64, block_n=64, block_k=128, programs_per_sm=0.97, num_stages=5, fixed_order=True
    )
    monkeypatch.setitem(tuned.TABLE, ("flat64", True), entry)
    config = heuristics.choose(64, 4096, 16384, H200, atomic=True)
    assert (config.fixed_order, config.reduce, config.split_k) == (True, "serial", 2)
    monkeypatch.setitem(tuned.TABLE, ("flat64", True), attrs.evolve(entry, fixed_order=False))
    assert heuristics.choose(64, 4096, 16384, H200, atomic=True).fixed_order is False
    monkeypatch.setenv(heuristics.CONFIG_ENV, "fixed_order=1,reduce=tree")
    config = heuristics.choose(64, 4096, 16384, H200, atomic=True)
    assert (config.fixed_order, config.reduce) == (True, "tree")
    monkeypatch.setenv(heuristics.CONFIG_ENV, "fixed_order=yes")
    with pytest.raises(ValueError, match="fixed_order must be 0 or 1"):
        heuristics.choose(64, 4096, 16384, H200, atomic=True)


def test_a_reduce_scatter_split_keeps_one_program_per_sm_on_any_gpu():
    """It spins only with every program resident (one per SM): its split
    rounds down where the others' round to the nearest power of two (108 SMs:
    0.97 x 108 would round up to 128, one program past the SM count)."""
    scatter = tuned.Tuned(
        block_m=16, block_n=16, block_k=128, programs_per_sm=0.97, reduce="scatter"
    )
    serial = attrs.evolve(scatter, reduce="serial")
    assert tuned.split_for(serial, 1, 108) == 128
    for processors, tiles, split in [(132, 1, 128), (108, 1, 64), (132, 4, 32), (108, 4, 16),
                                     (304, 4, 64), (16, 32, 1)]:  # fmt: skip
        assert tuned.split_for(scatter, tiles, processors) == split
        assert tiles * split <= processors or split == 1
