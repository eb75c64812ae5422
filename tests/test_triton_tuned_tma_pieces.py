"""triton_tuned's TMA tiles in pieces (``Config.pieces``,
``tma_pieces_kernel.py``, ``tma_dispatch.tma_piece_candidates``): a tile of
64 + 32 + 16 columns where 128-column tiles leave SMs idle.

Under Triton's interpreter the kernel computes every column of C, pieces
past N included (each piece's boxes clipped or wholly outside), in the
layouts TMA takes (C starts as NaN: a column no piece stores is caught),
and gives what TMA cannot take to the pointer split-K kernel. The rule
offers the pieces at 128x14336x4096 only among Llama 3 8B's projections,
and the tuner weighs them only where ``GEMMREG_TRITON_TUNED_UNMEASURED=1``
asks. Compiled for an H200 (sm_90) here, with no GPU: within shared
memory, every piece through TMA and ``wgmma``, the K loop pipelined,
nothing spilled.
"""

from __future__ import annotations

import attrs
import gemmreg
import pytest
from gemmreg.testing import native_compile
from gemmreg_plugins.triton_tuned import (
    configs,
    dispatch,
    launchers,
    paths_here,
    split_k,
    tma_dispatch,
)
from gemmreg_plugins.triton_tuned.configs import Config
from test_triton_tuned import TMA_IN_THE_INTERPRETER, launch_guarded

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim:DeprecationWarning"
)
H200_SMS = 132
PIECES = Config(
    path="tma_split_k", block_m=16, block_n=64, block_k=16, num_stages=2, num_warps=4, pieces=3
)
"""64 + 32 + 16 = 112 columns a tile, small enough for the interpreter."""
LLM_POINTS = [
    (tokens, n, k)
    for tokens in (1, 16, 128, 2048, 8192)
    for n, k in ((4096, 4096), (1024, 4096), (14336, 4096), (4096, 14336))
]


@TMA_IN_THE_INTERPRETER
@pytest.mark.parametrize(
    "config, shape, layout",
    [
        (PIECES, (20, 248, 40), "rowmajor"),  # 3 tiles, the last's half and quarter past N
        (PIECES, (20, 232, 40), "transposedB"),  # B^T (a weight) in three boxes a K step
        (PIECES, (40, 112, 33), "transposedA"),  # one tile exactly, a 1-element K tail
        (PIECES, (17, 336, 16), "rowmajor"),  # 3 whole tiles, one K block
        (attrs.evolve(PIECES, block_n=32, pieces=2), (20, 104, 40), "transposedB"),  # 32 + 16
    ],
)
def test_a_tile_in_pieces_computes_every_column(config, shape, layout):
    assert launch_guarded(config, shape, "fp16", layout, H200_SMS, seed=11) < 2e-3


@pytest.mark.parametrize(
    "dtype, layout, shape, tma_able",
    [
        ("fp32", "rowmajor", (40, 64, 72), True),  # TF32 needs B K-major: not this kernel's
        ("fp16", "padded", (33, 61, 65), False),  # rows whose strides TMA refuses
    ],
)
def test_what_tma_cannot_take_goes_to_the_pointer_kernel_in_the_first_piece(
    monkeypatch, dtype, layout, shape, tma_able
):
    taken = []
    real = split_k.split_k_launcher

    def spy(config, *args):
        taken.append(config)
        return real(config, *args)

    monkeypatch.setattr(split_k, "split_k_launcher", spy)
    assert launch_guarded(PIECES, shape, dtype, layout, H200_SMS, seed=3, tma_able=tma_able) < 2e-3
    instead = attrs.evolve(PIECES, path="split_k", pieces=1)
    assert taken == [instead]
    assert launchers.taken_instead(PIECES, PIECES) == instead


def test_pieces_are_offered_at_128x14336x4096_alone_among_llama_shapes():
    """128 tiles of 112 columns against 112 of 128 on 132 SMs; nowhere else
    among the 20 points do 112-column tiles give more programs in one round."""
    offered = {
        point: tma_dispatch.tma_piece_candidates(
            *point, H200_SMS, "bf16", dispatch.family(*point, H200_SMS)
        )
        for point in LLM_POINTS
    }
    assert {point for point, found in offered.items() if found} == {(128, 14336, 4096)}
    for config in offered[(128, 14336, 4096)]:
        assert (config.columns, config.split_k, config.pieces) == (112, 1, 3)
        assert -(-14336 // config.columns) == 128
    assert not tma_dispatch.tma_piece_candidates(128, 14336, 4096, H200_SMS, "fp32", "split_k")


def test_the_tuner_weighs_pieces_only_where_unmeasured_forms_are_asked_for(monkeypatch):
    problem = gemmreg.Problem(m=128, n=14336, k=4096, dtype="bf16", layout="transposedB")
    hopper = attrs.evolve(
        gemmreg.where(), backend="cuda", device="cuda", capability=(9, 0), arch="sm90",
        multiprocessors=H200_SMS,
    )  # fmt: skip
    monkeypatch.setattr(paths_here, "tma_supported", lambda where: True)
    monkeypatch.delenv("GEMMREG_TRITON_TUNED_UNMEASURED", raising=False)
    assert not any(c.pieces > 1 for c in paths_here.candidates_for(problem, hopper))
    monkeypatch.setenv("GEMMREG_TRITON_TUNED_UNMEASURED", "1")
    asked = [c for c in paths_here.candidates_for(problem, hopper) if c.pieces > 1]
    assert asked == tma_dispatch.tma_piece_candidates(128, 14336, 4096, H200_SMS, "bf16", "split_k")
    assert all(configs.unmeasured(c) for c in asked)


def test_a_tile_in_pieces_survives_its_name_and_the_cache_and_nonsense_is_refused():
    config = tma_dispatch.tma_piece_candidates(128, 14336, 4096, H200_SMS, "bf16", "split_k")[0]
    assert config.name == "tma_split_k:128x64x128-s3-w8-g8-k1-p3"
    assert Config.from_name(config.name) == config
    assert Config.from_dict(config.to_dict()) == config
    assert Config.from_name("persistent_tma:128x256x64-s3-w8-pertile").pieces == 1
    for wrong in (
        {"pieces": 4},  # a piece of 8 columns: less than tl.dot takes
        {"pieces": 3, "split_k": 2},  # K whole
        {"pieces": 2, "path": "split_k"},  # the TMA path's
        {"pieces": 3, "block_n": 32},  # its quarter would be 8 columns
    ):
        with pytest.raises(ValueError):
            Config.from_dict({**config.to_dict(), **wrong})


SCRIPT = """
import json, os, re
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
from gemmreg.testing import compile_natively, ptxas_report
from gemmreg_plugins.triton_tuned import tma_dispatch
from gemmreg_plugins.triton_tuned.tma_pieces_kernel import gemm_tma_pieces as fn

out = {}
for bm, bn, bk, stages, warps in tma_dispatch.TMA_PIECE_TILES:
    for b_t in (False, True):
        widths = [bn, bn // 2, bn // 4]
        constexprs = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, PIECES=3, COLUMNS=sum(widths),
                          A_TRANSPOSED=False, B_TRANSPOSED=b_t, INPUT_PRECISION="ieee")
        boxes = [(w, bk) if b_t else (bk, w) for w in widths]
        types = {"a_desc": f"tensordesc<bf16[{bm}, {bk}]>"}
        for name, box in zip(("b_desc", "b_half", "b_quarter"), boxes):
            types[name] = f"tensordesc<bf16[{box[0]}, {box[1]}]>"
        for name, width in zip(("c_desc", "c_half", "c_quarter"), widths):
            types[name] = f"tensordesc<bf16[{bm}, {width}]>"
        compiled = compile_natively(fn, types, constexprs, num_warps=warps, num_stages=stages)
        ttgir, ptx = compiled.asm["ttgir"], compiled.asm["ptx"]
        out[f"{bm}x{bn}x{bk}-s{stages} B^T={b_t}"] = {
            "shared": compiled.metadata.shared,
            "stage": (bm + sum(widths)) * bk * 2,
            "stages": stages,
            "async_dots": ttgir.count("warp_group_dot ") - ttgir.count("isAsync = false"),
            "loads": len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.shared::\\w+\\.global", ptx)),
            "stores": len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.global\\.shared", ptx)),
            "local": len(re.findall(r"\\bst\\.local|\\bld\\.local", ptx)),
            "serialized": ptxas_report(ptx)["serialized"],
        }
print(json.dumps(out))
"""

SHARED_MEMORY = 227 * 1024
"""An H200 block's shared memory (232448 bytes)."""


def test_every_tile_in_pieces_compiles_for_an_h200_pipelined_on_wgmma():
    compiled = native_compile(SCRIPT)
    assert len(compiled) == 2 * len(tma_dispatch.TMA_PIECE_TILES), compiled
    for name, found in compiled.items():
        # the operand ring of every stage but the one being filled fits beside the rest
        assert (found["stages"] - 1) * found["stage"] <= found["shared"] <= SHARED_MEMORY, (name, found)  # fmt: skip
        assert found["async_dots"] == 3, (name, found)  # one wgmma chain per piece
        assert found["loads"] >= 4 and found["stores"] == 3, (name, found)  # A, B x 3; C x 3
        assert found["local"] == 0, (name, found)  # no accumulator spilled
        assert not found["serialized"], name  # ptxas kept every wgmma pipelined
