"""triton_tuned's TMA stream-K form for tiles fewer than the SMs
(``Config.stream_k`` on the ``tma_split_k`` path: ``tma_stream_k.py``,
``tma_stream_k_kernel.py``), under Triton's interpreter and on paper.

How the K steps are shared out is checked against a brute-force walk of
every range; the kernel runs on small odd shapes in fp16 (the interpreter
cannot run bf16) with tiles cut into two and three pieces, its ranges
handed out in order and last to first (``tma_stream_k.REVERSED``), and C
must be the same bits either way. Every case checks C against float64, the
guard words around C, and that the call left the arrival counters at 0."""

from __future__ import annotations

import itertools

import attrs
import pytest
from gemmreg_plugins.triton_tuned import configs, launchers, split_k, tma_dispatch, tma_stream_k
from gemmreg_plugins.triton_tuned.configs import Config
from test_triton_tuned import SMALL_TILED, TMA_IN_THE_INTERPRETER, launch_guarded

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim:DeprecationWarning"
)
H200_SMS = 132
TSK = Config(
    path="tma_split_k",
    block_m=32,
    block_n=16,
    block_k=16,
    num_stages=2,
    num_warps=4,
    stream_k=True,
)


def _walk(tiles: int, k_tiles: int, programs: int) -> dict[int, list[int]]:
    """Each tile's sharers, in K order, from every range walked step by step."""
    total = tiles * k_tiles
    sharers: dict[int, list[int]] = {t: [] for t in range(tiles)}
    for p in range(programs):
        for step in range(p * total // programs, (p + 1) * total // programs):
            if p not in sharers[step // k_tiles]:
                sharers[step // k_tiles].append(p)
    return sharers


@pytest.mark.parametrize("tiles", [1, 3, 4, 7, 112, 128])
@pytest.mark.parametrize("k_tiles", [1, 2, 5, 32])
@pytest.mark.parametrize("sms", [3, 5, 132])
def test_the_ranges_cover_every_step_once_within_the_plans_bounds(tiles, k_tiles, sms):
    shared = tma_stream_k.plan(tiles, k_tiles, sms)
    total = tiles * k_tiles
    assert shared.programs == min(sms, total)
    sharers = _walk(tiles, k_tiles, shared.programs)
    ranges = [
        range(p * total // shared.programs, (p + 1) * total // shared.programs)
        for p in range(shared.programs)
    ]
    assert all(len(r) >= 1 for r in ranges)  # no program idle, none waited for in vain
    assert sum(len(r) for r in ranges) == total
    assert max(len({s // k_tiles for s in r}) for r in ranges) <= shared.max_tiles
    assert max(len(s) for s in sharers.values()) <= shared.max_pieces
    for t, programs in sharers.items():  # the kernel's opener and closer, as it computes them
        opener = ((t * k_tiles + 1) * shared.programs - 1) // total
        closer = ((t + 1) * k_tiles * shared.programs - 1) // total
        assert programs == list(range(opener, closer + 1)), (t, programs)


def test_at_128_tokens_the_gate_projection_shares_112_tiles_over_every_sm():
    shared = tma_stream_k.plan(112, 4096 // 128, H200_SMS)
    assert shared == tma_stream_k.Plan(programs=132, max_tiles=2, max_pieces=3)


@TMA_IN_THE_INTERPRETER
@pytest.mark.parametrize("reversed_order", [False, True], ids=["in-order", "reversed"])
@pytest.mark.parametrize(
    "config, shape, layout, sms",
    [
        (TSK, (65, 40, 72), "rowmajor", 11),  # 9 tiles of 5 steps on 11: ranges of 4-5
        (TSK, (40, 40, 72), "transposedB", 11),  # 6 tiles of 5 steps: ranges of 2-3, 3 pieces
        (TSK, (72, 40, 33), "transposedA", 13),  # A^T, a 1-element K tail; 27 steps on 13
        (TSK, (33, 16, 128), "rowmajor", 3),  # 2 tiles of 8 steps: one cut in the middle
        (attrs.evolve(TSK, block_m=16, block_n=32), (20, 72, 48), "rowmajor", 13),
    ],
)
def test_tma_stream_k_computes_c(monkeypatch, reversed_order, config, shape, layout, sms):
    m, n, _ = shape
    tiles = -(-m // config.block_m) * -(-n // config.block_n)
    assert tiles < sms  # the form is for tiles fewer than the SMs
    monkeypatch.setattr(tma_stream_k, "REVERSED", reversed_order)
    assert launch_guarded(config, shape, "fp16", layout, sms, seed=7) < 2e-3
    assert all(int(found.counters.abs().sum()) == 0 for found in split_k.cached().values())


@TMA_IN_THE_INTERPRETER
def test_c_is_the_same_bits_whichever_piece_arrives_last(monkeypatch):
    """The pieces are added in K order whoever arrives last: 6 tiles of 5
    steps on 11 programs, each tile cut into two or three pieces."""
    import torch

    m, n, k = 40, 40, 72
    generator = torch.Generator().manual_seed(5)
    a = torch.randn(m, k, generator=generator).half()
    b = torch.randn(k, n, generator=generator).half()
    results = []
    for order in (False, True):
        monkeypatch.setattr(tma_stream_k, "REVERSED", order)
        out = torch.empty(m, n, dtype=torch.half)
        launchers.launcher(TSK, m, n, k, "ieee", 11, fallback=SMALL_TILED)(a, b, out)
        results.append(out)
    assert torch.equal(results[0], results[1])


def test_what_tma_cannot_take_goes_to_the_pointer_kernel_in_the_same_tile():
    taken = launchers.taken_instead(TSK, SMALL_TILED)
    assert taken == attrs.evolve(TSK, path="split_k", stream_k=False)


def test_stream_k_candidates_are_offered_where_tiles_are_fewer_than_the_sms_unmeasured():
    gate = tma_dispatch.tma_stream_k_candidates(128, 14336, 4096, H200_SMS, "bf16", "split_k")
    assert [c.name for c in gate] == ["tma_split_k:128x128x128-s3-w8-g8-sk-k1"]
    assert all(configs.unmeasured(c) for c in gate)  # no GPU has run it
    found = configs.candidates("cuda", "bf16", 128, 14336, 4096, tma=True, num_sms=H200_SMS)
    assert gate[0] in found
    kv = tma_dispatch.tma_stream_k_candidates(2048, 1024, 4096, H200_SMS, "bf16", "split_k")
    assert kv == gate  # 128 tiles on 132 SMs: the other point no form has won yet
    for m, n, fam in itertools.product((128,), (1024, 4096), ("split_k",)):
        # 8 and 32 tiles of 128x128: too few to share out as one range per SM
        assert not tma_dispatch.tma_stream_k_candidates(m, n, 4096, H200_SMS, "bf16", fam)
    assert not tma_dispatch.tma_stream_k_candidates(128, 14336, 4096, H200_SMS, "fp32", "split_k")
    assert not tma_dispatch.tma_stream_k_candidates(2048, 14336, 4096, H200_SMS, "bf16", "tiles")


def test_a_stream_k_config_survives_its_name_and_is_refused_split_or_in_pieces():
    config = tma_dispatch.tma_stream_k_candidates(128, 14336, 4096, H200_SMS, "bf16", "split_k")[0]
    assert Config.from_name(config.name) == config
    assert Config.from_dict(config.to_dict()) == config
    for change in (dict(split_k=2), dict(pieces=3), dict(path="split_k")):
        with pytest.raises(ValueError, match="stream_k"):
            Config.from_dict({**config.to_dict(), **change})


NATIVE = """
import json, os, re
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
from gemmreg.testing import compile_natively, ptxas_report
from gemmreg_plugins.triton_tuned import tma_dispatch, tma_stream_k
from gemmreg_plugins.triton_tuned.tma_stream_k_kernel import gemm_tma_stream_k as fn

out = {}
for bm, bn, bk, stages, warps in tma_dispatch.TMA_STREAM_K_TILES:
    shared = tma_stream_k.plan(112, 4096 // bk, 132)  # 128x14336x4096 on 132 SMs
    constexprs = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, PROGRAMS=shared.programs,
                      MAX_TILES=shared.max_tiles, MAX_PIECES=shared.max_pieces,
                      A_TRANSPOSED=False, B_TRANSPOSED=True, INPUT_PRECISION="ieee",
                      REVERSED=False)
    types = {"a_desc": f"tensordesc<bf16[{bm}, {bk}]>",
             "b_desc": f"tensordesc<bf16[{bn}, {bk}]>",
             "c_desc": f"tensordesc<bf16[{bm}, {bn}]>", "ws_ptr": "*fp32", "count_ptr": "*i32"}
    compiled = compile_natively(fn, types, constexprs, aligned=("ws_ptr", "count_ptr"),
                                num_warps=warps, num_stages=stages)
    ttgir, ptx = compiled.asm["ttgir"], compiled.asm["ptx"]
    out[f"{bm}x{bn}x{bk}"] = {
        "max_tiles": shared.max_tiles,
        "shared": compiled.metadata.shared,
        "staged_buffers": len(re.findall(rf"local_alloc : \\(\\) -> !ttg.memdesc<{stages}x", ttgir)),
        "async_dots": ttgir.count("warp_group_dot ") - ttgir.count("isAsync = false"),
        "acq_rel_adds": len(re.findall(r"atom\\.global\\.gpu\\.acq_rel\\.add", ptx)),
        "cg_loads": len(re.findall(r"ld\\.global\\.cg", ptx)),
        "local": len(re.findall(r"\\bst\\.local|\\bld\\.local", ptx)),
        "serialized": ptxas_report(ptx)["serialized"],
    }
print(json.dumps(out))
"""


@pytest.mark.slow
def test_the_stream_k_kernel_compiles_for_an_h200_pipelined_with_one_hand_over_a_tile():
    """At 128x14336x4096's plan (132 programs, two tiles a range at most):
    within shared memory, the K loop staged and on asynchronous ``wgmma``,
    nothing spilled, and one acquire-release hand-over for each tile a range
    may touch, the other pieces read back from L2."""
    from gemmreg.testing import native_compile

    compiled = native_compile(NATIVE)
    assert len(compiled) == len(tma_dispatch.TMA_STREAM_K_TILES)
    for tile, found in compiled.items():
        assert 0 < found["shared"] <= 227 * 1024, tile
        assert found["staged_buffers"] >= 2 and found["async_dots"] >= 1, (tile, found)
        assert found["acq_rel_adds"] == found["max_tiles"] and found["cg_loads"] > 0, found
        assert found["local"] == 0 and not found["serialized"], (tile, found)
