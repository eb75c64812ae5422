"""triton_tuned's GEMV path (``gemv.py``, ``gemv_kernel.py``, its dispatch).

The dispatch is checked as a pure function for the LLM shapes on an H200's
132 SMs. The kernel runs under Triton's interpreter on small odd shapes, at
M = 1 (the accumulator kept per element), 3 and 16 (kept per row of A), in
fp16 and fp32 (the interpreter cannot run bf16), in every layout, with K
cut and not; and it is compiled natively for sm_90 (no GPU needed) to check
what only native code has: pipelined 16-byte copies of the weight, no
spills, and the hand-over through one acquire-release atomic.
"""

from __future__ import annotations

import attrs
import pytest
from gemmreg.testing import native_compile
from gemmreg_plugins.triton_tuned import configs, dispatch, launchers, split_k
from gemmreg_plugins.triton_tuned.configs import Config
from test_triton_tuned_split_k import H200_SMS, llm_points, run_guarded

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim:DeprecationWarning"
)

GV = Config(path="gemv", block_m=16, block_n=1, block_k=16, num_stages=2, num_warps=4)


# ---------------------------------------------------------------------------
# Dispatch and configs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("m, n, k", [p for p in llm_points() if p[0] == 1])
def test_decode_points_get_gemv_candidates_between_split_k_and_the_tiles(m, n, k):
    found = configs.candidates("cuda", "bf16", m, n, k, tma=True, num_sms=H200_SMS)
    paths = [c.path for c in found]
    gemv = [c for c in found if c.path == "gemv"]
    assert gemv and paths.index("gemv") > paths.index("split_k")
    assert max(i for i, p in enumerate(paths) if p == "gemv") < paths.index("tiled")
    for c in gemv:
        assert c.block_n == 1 and c.block_m * c.block_n * c.block_k <= dispatch.GEMV_PRODUCTS
        cut = split_k.plan(k, c.block_k, c.split_k)
        assert cut.splits == c.split_k and cut.blocks_per_split >= dispatch.MIN_BLOCKS_PER_SPLIT
        tiles = -(-n // c.block_m)
        most = dispatch.splits_for(tiles, -(-k // c.block_k), H200_SMS, c.block_m)[-1]
        assert tiles * c.split_k >= dispatch.NEARLY_FULL * H200_SMS or c.split_k == most


@pytest.mark.parametrize(
    "m, n, k, dtype, offered",
    [
        (16, 4096, 4096, "bf16", False),  # tensor cores from 8 rows on
        (dispatch.GEMV_MAX_M, 4096, 4096, "fp16", True),
        (dispatch.GEMV_MAX_M + 1, 4096, 4096, "bf16", False),
        (1, 4096, 4096, "fp32", False),  # fp32 is declared as TF32 on tl.dot
        (1, 128256, 4096, "bf16", True),  # a vocabulary-wide weight: tiles fill the GPU
    ],
)
def test_gemv_goes_to_a_few_rows_of_16_bit_inputs(m, n, k, dtype, offered):
    found = configs.candidates("cuda", dtype, m, n, k, tma=True, num_sms=H200_SMS)
    assert any(c.path == "gemv" for c in found) == offered
    assert not any(c.path == "gemv" for c in configs.candidates("rocm", dtype, m, n, k, False))


@pytest.mark.parametrize(
    "tile, block_m, fitted",
    [
        ((32, 256), 1, (32, 256)),
        ((32, 256), 2, (32, 128)),
        ((32, 256), 4, (16, 128)),  # K to 128 first, then the rows
        ((64, 128), 4, (16, 128)),
        ((16, 512), 16, (16, 32)),  # rows at 16 already: K again
    ],
)
def test_more_rows_of_a_shrink_the_tile_to_the_products_budget(tile, block_m, fitted):
    assert dispatch.gemv_tile(*tile, block_m) == fitted
    assert block_m * fitted[0] * fitted[1] <= dispatch.GEMV_PRODUCTS


def test_gemv_tiles_fit_small_problems_and_the_key_follows_them(monkeypatch):
    for c in dispatch.gemv_candidates(1, 20, 40, H200_SMS, "fp16"):
        assert c.block_m <= 32 and c.block_k <= 64
    before = configs.describe_lists()
    monkeypatch.setattr(dispatch, "GEMV_MAX_M", 8)
    assert configs.describe_lists() != before


def test_a_gemv_config_survives_the_cache_and_misplaced_fields_do_not():
    config = attrs.evolve(GV, split_k=4)
    assert Config.from_dict(config.to_dict()) == config
    assert config.name == "gemv:16x1x16-s2-w4-g8-k4"
    for bad in (
        {**GV.to_dict(), "swap_ab": True},
        {**GV.to_dict(), "block_n": 3},
        {**GV.to_dict(), "block_m": 8},  # the weight's rows stay >= 16
        {**GV.to_dict(), "path": "tiled", "block_n": 1},
    ):
        with pytest.raises(ValueError):
            Config.from_dict(bad)


def test_the_launcher_refuses_fewer_columns_than_rows_of_a():
    with pytest.raises(ValueError, match="rows of A"):
        launchers.launcher(attrs.evolve(GV, block_n=2), 3, 16, 16, "ieee", H200_SMS)


# ---------------------------------------------------------------------------
# The kernel, under the interpreter
# ---------------------------------------------------------------------------

CASES = [
    # (split, weight rows x M columns x K, shape, layout)
    (4, (16, 1, 16), (1, 33, 100), "transposedB"),  # M=1: N and K tails, 7 blocks in 4
    (1, (32, 1, 32), (1, 50, 64), "transposedB"),
    (3, (16, 4, 32), (3, 45, 90), "transposedB"),  # M=3 in 4 columns: one padded
    (2, (16, 16, 16), (16, 40, 72), "transposedB"),
    (3, (16, 1, 16), (1, 37, 47), "rowmajor"),  # the weight's N contiguous, not K
    (2, (16, 4, 16), (3, 17, 33), "rowmajor"),
    (5, (16, 16, 16), (16, 23, 80), "rowmajor"),  # 5 blocks, 5 ranges of one
    (2, (16, 4, 16), (3, 21, 40), "transposedA"),
    (3, (16, 2, 16), (2, 19, 70), "padded"),
    (3, (16, 1, 16), (1, 4, 1), "transposedB"),  # K=1: one range only
]


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
@pytest.mark.parametrize("split, tile, shape, layout", CASES)
def test_gemv_computes_c_in_every_layout(dtype, split, tile, shape, layout):
    config = attrs.evolve(GV, block_m=tile[0], block_n=tile[1], block_k=tile[2], split_k=split)
    out, expected, scale = run_guarded(config, shape, dtype, layout)
    error = float((out.double() - expected).abs().max()) / scale
    assert error < (2e-3 if dtype == "fp16" else 1e-6)
    for found in split_k.cached().values():
        assert int(found.counters.abs().sum()) == 0  # every call leaves them clean


@pytest.mark.parametrize("m", [1, 3])
@pytest.mark.parametrize("layout", ["rowmajor", "transposedB"])
def test_gemv_gives_the_tiled_kernels_bits_on_exact_arithmetic(m, layout):
    """fp32 inputs with few mantissa bits add exactly in any order: the GEMV
    kernel, cut or not, must give a @ b bit for bit."""
    import torch
    from gemmreg.contract.inputs import apply_layout

    n, k = 45, 90
    generator = torch.Generator().manual_seed(11)
    a = torch.randint(-8, 8, (m, k), generator=generator).float()
    b = torch.randint(-8, 8, (k, n), generator=generator).float()
    a, b = apply_layout(a, b, layout)
    for split in (1, 4):
        config = attrs.evolve(GV, block_n=4 if m > 1 else 1, split_k=split)
        out = torch.full((m, n), float("nan"))
        launchers.launcher(config, m, n, k, "ieee", H200_SMS)(a, b, out)
        assert torch.equal(out, a @ b)


@pytest.mark.parametrize("m", [1, 3])
def test_gemv_c_is_the_same_bits_whichever_range_arrives_last(monkeypatch, m):
    config = attrs.evolve(GV, block_n=4 if m > 1 else 1, split_k=3)
    shape = (m, 40, 72)
    in_order, _, _ = run_guarded(config, shape, "fp32", "transposedB", seed=5)
    monkeypatch.setattr(split_k, "REVERSED", True)
    reversed_order, expected, scale = run_guarded(config, shape, "fp32", "transposedB", seed=5)
    assert reversed_order.equal(in_order)
    assert float((reversed_order.double() - expected).abs().max()) / scale < 1e-6


# ---------------------------------------------------------------------------
# Native code for sm_90
# ---------------------------------------------------------------------------

SCRIPT = """
import json, os, re, subprocess, tempfile
from pathlib import Path
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
import triton
from gemmreg.testing import compile_natively
from gemmreg_plugins.triton_tuned import dispatch, gemv_kernel

fn = gemv_kernel.gemv_split_k
cuobjdump = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
aligned_names = ("a_ptr", "w_ptr", "c_ptr", "ws_ptr", "count_ptr", "n", "k", "stride_am",
                 "stride_wn", "stride_cm")
out = {}
for rows_of_a in (1, 4):
    width = 1 << max(0, rows_of_a - 1).bit_length()
    for tile in dispatch.GEMV_TILES:
        rows, bk = dispatch.gemv_tile(tile[0], tile[1], width)
        stages, warps = tile[2], tile[3]
        for split in (1, 4):
            constexprs = dict(ROWS=rows_of_a, BLOCK_M=width, BLOCK_N=rows, BLOCK_K=bk,
                              SPLIT_K=split, NUM_STAGES=stages, A_K_UNIT=True, W_K_UNIT=True,
                              EVEN_K=True, REVERSED=False)
            if split == 1:
                constexprs.update(ws_ptr=None, count_ptr=None)
            types = {"a_ptr": "*bf16", "w_ptr": "*bf16", "c_ptr": "*bf16", "ws_ptr": "*fp32",
                     "count_ptr": "*i32"}
            compiled = compile_natively(
                fn, types, constexprs, aligned=aligned_names, num_warps=warps, num_stages=stages
            )
            ptx = compiled.asm["ptx"]
            cubin = Path(tempfile.mkdtemp()) / "k.cubin"
            cubin.write_bytes(compiled.asm["cubin"])
            usage = subprocess.run([str(cuobjdump), "--dump-resource-usage", str(cubin)],
                                   capture_output=True, text=True, check=True).stdout
            out[f"M{rows_of_a} {rows}x{width}x{bk} k{split}"] = {
                "vectors_per_stage": rows * bk * 2 // 16 // (32 * warps),
                "stages": stages,
                "shared": compiled.metadata.shared,
                "registers": int(re.search(r"REG:(\\d+)", usage).group(1)),
                "stack": int(re.search(r"STACK:(\\d+)", usage).group(1)),
                "copies": len(re.findall(r"cp\\.async\\.c[ga]\\.shared\\.global", ptx)),
                "copies_16": len(re.findall(
                    r"cp\\.async\\.c[ga]\\.shared\\.global(?:\\.L2::\\w+)?\\s*\\[[^\\]]+\\],\\s*\\[[^\\]]+\\],\\s*(?:0x10|16)\\b", ptx)),
                "wgmma": len(re.findall(r"wgmma", ptx)),
                "acq_rel_adds": len(re.findall(r"atom\\.global\\.gpu\\.acq_rel\\.add", ptx)),
                "atomics": len(re.findall(r"\\batom\\.", ptx)),
            }
print(json.dumps(out))
"""

SHARED_MEMORY = 227 * 1024


REGISTER_LIMIT = 168
"""Registers a thread of a 4-warp program may hold with at least three
programs an SM (65536 / 384, rounded down to the allocation unit of 8), on
every Triton the stacks test: the allocation moves with the compiler (one
tile takes 136 under Triton 3.4 and 167 under 3.9; under 3.7 every tile
takes 128 or fewer, four programs an SM), and three programs of 16-32 KB of
weight in flight each still keep the weight streaming."""


@pytest.fixture(scope="module")
def compiled() -> dict:
    return native_compile(SCRIPT)


def test_every_gemv_tile_pipelines_16_byte_copies_without_spilling(compiled):
    decode = [name for name in compiled if name.startswith("M1 ")]
    assert len(decode) == 2 * len(dispatch.GEMV_TILES) and len(compiled) > len(decode)
    for name, found in compiled.items():
        # the weight's stages in flight, each thread's share of them in
        # 16-byte copies: the prologue's (stages - 1) and the loop's one
        assert found["copies_16"] >= found["vectors_per_stage"] * found["stages"], name
        assert found["stack"] == 0, name  # nothing spilled
        # at least three programs of 4 warps an SM by registers, four by shared memory
        assert found["registers"] <= REGISTER_LIMIT, name
        assert 0 < found["shared"] <= SHARED_MEMORY // 4, name
        assert found["wgmma"] == 0, name  # the CUDA cores only


def test_a_cut_gemv_tile_hands_over_through_one_acq_rel_atomic(compiled):
    for name, found in compiled.items():
        if name.endswith("k1"):
            assert found["atomics"] == 0, name
        else:
            assert found["acq_rel_adds"] == 1, name
