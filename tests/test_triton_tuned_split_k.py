"""triton_tuned's split-K path and its dispatch (``dispatch.py``,
``split_k.py``, ``split_k_kernel.py``).

The dispatch is a pure function of the shape and the SM count, checked here
for every point of ``examples/shapes/llm-projections.yaml`` on an H200's 132
SMs. The kernel runs under Triton's interpreter on small odd shapes, in
fp16 and fp32 (the interpreter cannot run bf16), in every layout, swapped
and not, with K cut and not; the whole correctness matrix runs it in
gemmreg's workers (``test_triton_tuned_split_k_matrix.py``).
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
import yaml
from gemmreg_plugins.triton_tuned import configs, dispatch, launchers, split_k
from gemmreg_plugins.triton_tuned.configs import Config

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim:DeprecationWarning"
)

H200_SMS = 132
LLM_SHAPES = Path(__file__).resolve().parents[1] / "examples/shapes/llm-projections.yaml"


def llm_points() -> list[tuple[int, int, int]]:
    shapes = yaml.safe_load(LLM_SHAPES.read_text())["shapes"]
    return [(s["m"], s["n"], s["k"]) for s in shapes]


# ---------------------------------------------------------------------------
# Dispatch: which family each problem gets
# ---------------------------------------------------------------------------

INTENDED = {
    1: "swap_ab",  # decode: M on the tile's 16 columns
    16: "swap_ab",
    128: "split_k",  # 1 to 4 tiles of 128 rows by 256 against 132 SMs
}


@pytest.mark.parametrize("m, n, k", llm_points(), ids=lambda v: str(v))
def test_every_llm_point_goes_to_the_family_meant_for_it(m, n, k):
    family = dispatch.family(m, n, k, H200_SMS)
    if m in INTENDED:
        assert family == INTENDED[m]
    elif n == 1024 and m == 2048:  # k_proj, v_proj at 2048 tokens: 16x4 = 64 big tiles
        assert family == "split_k"
    else:  # 2048 and 8192 tokens: the big tiles fill every SM
        assert family == "tiles"


def test_the_llm_file_has_the_twenty_points_the_table_above_covers():
    points = llm_points()
    assert len(points) == 20 and {m for m, _, _ in points} == {1, 16, 128, 2048, 8192}


@pytest.mark.parametrize(
    "shape, sms, family",
    [
        ((4096, 4096, 4096), 132, "tiles"),  # 256 tiles: unchanged candidates
        ((8192, 8192, 8192), 132, "tiles"),
        ((8192, 14336, 4096), 132, "tiles"),
        ((8192, 4096, 14336), 132, "tiles"),
        ((16, 16, 65536), 132, "swap_ab"),
        ((32, 8192, 8192), 132, "swap_ab"),
        ((33, 8192, 8192), 132, "split_k"),  # past SWAP_MAX_M
        ((64, 4096, 16384), 132, "split_k"),
        ((128, 128, 32768), 132, "split_k"),
        ((128, 1024, 4096), 4, "tiles"),  # 4 tiles fill a 4-SM GPU
        ((2048, 1024, 4096), 64, "tiles"),
    ],
)
def test_the_family_follows_the_sm_count(shape, sms, family):
    assert dispatch.family(*shape, sms) == family


@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (8192, 4096, 14336), (2048, 14336, 4096)])
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_problems_that_fill_the_gpu_keep_the_candidates_they_had(shape, dtype):
    before = configs.candidates("cuda", dtype, *shape, tma=True, gluon=dtype != "fp32")
    after = configs.candidates(
        "cuda", dtype, *shape, tma=True, gluon=dtype != "fp32", num_sms=H200_SMS
    )
    assert after == before and not any(c.path == "split_k" for c in after)


@pytest.mark.parametrize("m, n, k", [p for p in llm_points() if p[0] <= 128])
def test_small_problems_get_split_k_first_and_the_tiled_fallback(m, n, k):
    found = configs.candidates("cuda", "bf16", m, n, k, tma=True, num_sms=H200_SMS)
    family = dispatch.family(m, n, k, H200_SMS)
    split = [c for c in found if c.path == "split_k"]
    assert split and found[: len(split)] == split  # first: picked where nothing is tuned
    assert all(c.swap_ab == (family == "swap_ab") for c in split)
    assert any(c.path == "tiled" for c in found)  # the tuner's fallback is a tiled config
    assert len(found) == len(set(found))
    for c in split:
        rows, cols = (n, m) if c.swap_ab else (m, n)
        tiles = -(-rows // c.block_m) * -(-cols // c.block_n)
        cut = split_k.plan(k, c.block_k, c.split_k)
        assert cut.splits == c.split_k  # the LLM shapes' K divides evenly
        assert cut.blocks_per_split >= dispatch.MIN_BLOCKS_PER_SPLIT
        assert 4 * c.split_k * c.block_m * c.block_n <= dispatch.MAX_REDUCE_BYTES or c.split_k == 1
        if c.swap_ab:
            assert c.block_n == 16  # M of 1 or 16 on the MMA's narrow side
        most = dispatch.splits_for(tiles, -(-k // c.block_k), H200_SMS, c.block_m * c.block_n)[-1]
        # (nearly) fills the SMs, or K (or the reduction) allows no more
        assert tiles * c.split_k >= dispatch.NEARLY_FULL * H200_SMS or c.split_k == most


@pytest.mark.parametrize(
    "tiles, k_blocks, elements, splits",
    [
        (16, 32, 64 * 16, (8, 16)),  # 1x1024x4096, 64-row swap tiles: 128 programs nearly fill
        (16, 32, 64 * 128, (4,)),  # 64x128 fp32 partials: 4 of them fill 128 KiB
        (8, 64, 64 * 16, (16,)),  # 16 per tile fill 132 SMs; 32 is past MAX_SPLIT
        (64, 64, 64 * 16, (2, 4, 8)),  # 1x4096x4096: 128 (nearly full), 256 and 512 programs
        (128, 64, 64 * 64, (1, 2, 4)),  # 128 tiles: 128 of 132 SMs busy with no split
        (40, 64, 64 * 16, (4, 8)),  # 160 and 320 programs; 80 is too few to time
        (224, 32, 64 * 16, (1, 2)),  # 1x14336x4096: the tiles fill the SMs already
        (1, 4, 16 * 16, (2,)),  # 2 K blocks per range at least
        (1, 1, 16 * 16, (1,)),  # one K block: nothing to cut
        (1, 4096, 16 * 16, (16,)),  # capped at MAX_SPLIT
    ],
)
def test_splits_fill_the_sms_within_their_caps(tiles, k_blocks, elements, splits):
    assert dispatch.splits_for(tiles, k_blocks, H200_SMS, elements) == splits


@pytest.mark.parametrize(
    "k, block_k, asked, splits, per_split",
    [
        (4096, 128, 8, 8, 4),
        (160, 16, 4, 4, 3),  # 10 blocks: 3+3+3+1
        (160, 16, 8, 5, 2),  # 8 ranges of 2 would leave 3 empty: 5 ranges
        (17, 16, 4, 2, 1),  # a 1-element tail block
        (16, 16, 4, 1, 1),
        (0, 16, 4, 1, 1),  # no K at all: one range, no block
    ],
)
def test_k_is_cut_into_ranges_none_empty(k, block_k, asked, splits, per_split):
    cut = split_k.plan(k, block_k, asked)
    assert (cut.splits, cut.blocks_per_split) == (splits, per_split)
    blocks = -(-k // block_k)
    assert (cut.splits - 1) * cut.blocks_per_split < max(1, blocks)  # the last one has a block


@pytest.mark.parametrize(
    "shape, tuned",
    [
        ((1, 1024, 4096), True),  # 4M multiply-adds, but 8 MiB of weight to stream
        ((1, 4096, 4096), True),
        ((64, 64, 64), False),  # launch-bound: the rule's smallest tile
        ((1, 512, 1024), False),  # 1 MiB of 16-bit weight
        ((256, 256, 256), True),
    ],
)
def test_memory_bound_problems_are_tuned_not_ruled(shape, tuned):
    volume = configs.tuning_volume(*shape)
    assert (volume >= configs.TUNE_MIN_VOLUME) == tuned
    assert volume >= shape[0] * shape[1] * shape[2]


# ---------------------------------------------------------------------------
# Configs
# ---------------------------------------------------------------------------

SK = Config(path="split_k", block_m=16, block_n=16, block_k=16, num_stages=1, num_warps=4)


def test_a_split_k_config_survives_the_cache_and_misplaced_fields_do_not():
    for config in (attrs.evolve(SK, split_k=3), attrs.evolve(SK, split_k=2, swap_ab=True)):
        assert Config.from_dict(config.to_dict()) == config
    swapped = attrs.evolve(SK, split_k=4, swap_ab=True)
    assert swapped.name.endswith("-k4-swap") and swapped.name != attrs.evolve(SK, split_k=4).name
    for bad in (
        {**SK.to_dict(), "split_k": 0},
        {**SK.to_dict(), "path": "tiled", "split_k": 2},
        {**SK.to_dict(), "path": "persistent_tma", "swap_ab": True},
    ):
        with pytest.raises(ValueError):
            Config.from_dict(bad)


def test_the_tuning_key_follows_the_dispatch_rules(monkeypatch):
    before = configs.describe_lists()
    monkeypatch.setattr(dispatch, "SWAP_MAX_M", 64)
    assert configs.describe_lists() != before


# ---------------------------------------------------------------------------
# The kernel, under the interpreter
# ---------------------------------------------------------------------------


def run_guarded(config: Config, shape, dtype: str, layout: str, seed: int = 3):
    """One launch into a C inside guard words; returns C, the float64
    product and max |A|@|B| (the error's scale)."""
    import torch
    from gemmreg.contract.inputs import apply_layout, torch_dtype

    m, n, k = shape
    generator = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=generator).to(torch_dtype(dtype))
    b = torch.randn(k, n, generator=generator).to(torch_dtype(dtype))
    expected = a.double() @ b.double()
    a, b = apply_layout(a, b, layout)
    buffer = torch.full((m * n + 64,), -1280.0, dtype=a.dtype)
    out = buffer[32 : 32 + m * n].view(m, n)
    out.fill_(float("nan"))
    launchers.launcher(config, m, n, k, "ieee", H200_SMS)(a, b, out)
    assert bool((buffer[:32] == -1280).all() and (buffer[-32:] == -1280).all())
    scale = float((a.double().abs() @ b.double().abs()).max())
    return out.clone(), expected, scale


CASES = [
    # (swap, split, tile rows x cols x K, shape, layout)
    (True, 3, (32, 16, 16), (5, 40, 72), "transposedB"),  # decode-like: weight rows contiguous
    (True, 4, (16, 16, 16), (1, 33, 100), "transposedB"),  # M=1, N and K tails, 7 blocks in 4
    (True, 2, (32, 32, 32), (17, 50, 65), "rowmajor"),  # A^T's K contiguous, B's N contiguous
    (True, 1, (32, 16, 16), (3, 17, 33), "transposedA"),
    (True, 3, (16, 16, 16), (9, 23, 47), "padded"),
    (False, 4, (16, 16, 16), (33, 20, 100), "rowmajor"),
    (False, 2, (32, 16, 32), (40, 36, 72), "transposedB"),
    (False, 5, (16, 32, 16), (21, 40, 80), "transposedA"),  # 5 blocks, 5 ranges of one
    (False, 1, (16, 16, 16), (19, 19, 19), "padded"),
    (False, 3, (16, 16, 16), (4, 4, 1), "rowmajor"),  # K=1: one range only
]


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
@pytest.mark.parametrize("swap, split, tile, shape, layout", CASES)
def test_split_k_computes_c_in_every_layout(dtype, swap, split, tile, shape, layout):
    config = attrs.evolve(
        SK, block_m=tile[0], block_n=tile[1], block_k=tile[2], split_k=split, swap_ab=swap
    )
    out, expected, scale = run_guarded(config, shape, dtype, layout)
    error = float((out.double() - expected).abs().max()) / scale
    assert error < (2e-3 if dtype == "fp16" else 1e-6)
    for found in split_k.cached().values():
        assert int(found.counters.abs().sum()) == 0  # every call leaves them clean


@pytest.mark.parametrize("layout", ["rowmajor", "transposedB"])
def test_swap_ab_and_split_k_give_the_plain_kernels_bits_in_fp32(layout):
    """Exact where the arithmetic is: fp32 inputs with few mantissa bits
    (integers) add exactly whatever the order, so the swapped and the split
    forms must give the tiled kernel's C bit for bit."""
    import torch
    from gemmreg.contract.inputs import apply_layout

    m, n, k = 7, 45, 90
    generator = torch.Generator().manual_seed(11)
    a = torch.randint(-8, 8, (m, k), generator=generator).float()
    b = torch.randint(-8, 8, (k, n), generator=generator).float()
    a, b = apply_layout(a, b, layout)
    tiled = Config(path="tiled", block_m=16, block_n=16, block_k=16, num_stages=1, num_warps=4)
    results = []
    for config in (tiled, attrs.evolve(SK, split_k=4), attrs.evolve(SK, split_k=3, swap_ab=True)):
        out = torch.full((m, n), float("nan"))
        launchers.launcher(config, m, n, k, "ieee", H200_SMS)(a, b, out)
        results.append(out)
    assert torch.equal(results[0], results[1]) and torch.equal(results[0], results[2])
    assert torch.equal(results[0], a @ b)


@pytest.mark.parametrize("swap", [True, False])
def test_c_is_the_same_bits_whichever_range_arrives_last(monkeypatch, swap):
    """The partials are added in split order, not in arrival order: with the
    ranges handed out last to first, the first range's program is the one
    that adds them up, and C must not change by a bit."""
    config = attrs.evolve(SK, split_k=3, swap_ab=swap)
    shape = (5, 40, 72) if swap else (40, 20, 72)
    in_order, _, _ = run_guarded(config, shape, "fp32", "transposedB", seed=5)
    monkeypatch.setattr(split_k, "REVERSED", True)
    reversed_order, expected, scale = run_guarded(config, shape, "fp32", "transposedB", seed=5)
    assert reversed_order.equal(in_order)
    assert float((reversed_order.double() - expected).abs().max()) / scale < 1e-6


# ---------------------------------------------------------------------------
# prepare's choice, on a pretend H200
# ---------------------------------------------------------------------------


def _h200():
    import gemmreg

    fields = dict(
        backend="cuda", device="cuda", capability=(9, 0), arch="sm90", multiprocessors=H200_SMS
    )
    return attrs.evolve(gemmreg.where(), **fields)


@pytest.mark.parametrize(
    "shape, family",
    [((1, 1024, 4096), "swap_ab"), ((128, 4096, 4096), "split_k"), ((8192, 4096, 4096), "tiles")],
)
def test_choose_hands_the_tuner_the_dispatched_candidates(monkeypatch, shape, family):
    """What ``prepare`` tunes over on an H200, for a transposed-view B (where
    the Gluon configs are offered too: ``test_triton_tuned_gluon.py``), and
    whether the rule is kept out of a memory-bound problem's way."""
    import gemmreg
    from gemmreg_plugins import triton_tuned
    from gemmreg_plugins.triton_tuned import paths_here, tuner

    seen = {}

    def fake_choose(candidates, key, make_trial, volume, tune_min_volume, **_):
        seen.update(candidates=list(candidates), volume=volume, minimum=tune_min_volume)
        first = candidates[0]
        return tuner.Choice(best=first, fallback=tuner.fallback_of(candidates, {}), origin="tuned")

    monkeypatch.setattr(tuner, "choose", fake_choose)
    monkeypatch.setattr(paths_here, "tma_supported", lambda where: True)
    problem = gemmreg.Problem(
        m=shape[0], n=shape[1], k=shape[2], dtype="fp16", layout="transposedB"
    )
    choice, _, sms = triton_tuned.choose(problem, _h200())
    assert sms == H200_SMS and seen["volume"] >= seen["minimum"]  # tuned, not ruled
    expected = dispatch.split_k_candidates(*shape, H200_SMS, "fp16", family)
    assert seen["candidates"][: len(expected)] == expected
    assert (choice.best.path == "split_k") == (family != "tiles")
    if family == "tiles":
        assert not any(c.path == "split_k" for c in seen["candidates"])
