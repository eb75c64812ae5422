"""triton_tuned's TMA split-K kernel compiled natively for an H200 (sm_90),
with no GPU here: Triton's compiler and ptxas run on the CPU.

Every tile of ``tma_dispatch.TMA_SPLIT_TILES``, bf16 against a transposed-view B
(a weight, as Llama's projections are laid out), split and not: it fits in
shared memory with its stages, its K loop is software-pipelined (one staged
buffer per operand, asynchronous ``wgmma``), and the split form hands its
partial over through one acquire-release atomic at GPU scope, reading the
others back from L2 (``ld.global.cg``); the unsplit form has no atomics.
"""

from __future__ import annotations

import pytest
from gemmreg.testing import native_compile
from gemmreg_plugins.triton_tuned import tma_dispatch

SCRIPT = """
import json, os, re
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
from gemmreg.testing import compile_natively, ptxas_report
from gemmreg_plugins.triton_tuned import tma_dispatch
from gemmreg_plugins.triton_tuned.tma_split_k_kernel import gemm_tma_split_k as fn

out = {}
for bm, bn, bk, stages, warps in tma_dispatch.TMA_SPLIT_TILES:
    for split in (1, 4):
        constexprs = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, SPLIT_K=split, A_TRANSPOSED=False,
                          B_TRANSPOSED=True, INPUT_PRECISION="ieee", REVERSED=False)
        types = {"a_desc": f"tensordesc<bf16[{bm}, {bk}]>",
                 "b_desc": f"tensordesc<bf16[{bn}, {bk}]>",
                 "c_desc": f"tensordesc<bf16[{bm}, {bn}]>", "ws_ptr": "*fp32", "count_ptr": "*i32"}
        if split == 1:
            constexprs.update(ws_ptr=None, count_ptr=None)
        compiled = compile_natively(
            fn, types, constexprs,
            aligned=("ws_ptr", "count_ptr") if split > 1 else (),
            num_warps=warps, num_stages=stages,
        )
        ttgir, ptx = compiled.asm["ttgir"], compiled.asm["ptx"]
        out[f"{bm}x{bn}x{bk}-k{split}"] = {
            "shared": compiled.metadata.shared,
            "staged_buffers": len(re.findall(rf"local_alloc : \\(\\) -> !ttg.memdesc<{stages}x", ttgir)),
            "async_dots": ttgir.count("warp_group_dot ") - ttgir.count("isAsync = false"),
            "acq_rel_adds": len(re.findall(r"atom\\.global\\.gpu\\.acq_rel\\.add", ptx)),
            "atomics": len(re.findall(r"\\batom\\.", ptx)),
            "cg_loads": len(re.findall(r"ld\\.global\\.cg", ptx)),
            "serialized": ptxas_report(ptx)["serialized"],
        }
print(json.dumps(out))
"""

SHARED_MEMORY = 227 * 1024
"""An H200 block's shared memory (232448 bytes)."""
FORMS = [f"{t[0]}x{t[1]}x{t[2]}-k{split}" for t in tma_dispatch.TMA_SPLIT_TILES for split in (1, 4)]


@pytest.fixture(scope="module")
def compiled() -> dict:
    return native_compile(SCRIPT)


@pytest.mark.parametrize("form", FORMS)
def test_every_tile_fits_and_its_k_loop_is_pipelined(compiled, form):
    found = compiled[form]
    assert 0 < found["shared"] <= SHARED_MEMORY
    assert found["staged_buffers"] >= 2  # A's and B's stages
    assert found["async_dots"] >= 1
    assert not found["serialized"], form  # ptxas kept every wgmma pipelined


@pytest.mark.parametrize("form", FORMS)
def test_split_forms_hand_over_through_one_acq_rel_atomic_and_l2(compiled, form):
    found = compiled[form]
    if form.endswith("-k1"):
        assert found["atomics"] == 0 and found["cg_loads"] == 0
    else:
        assert found["acq_rel_adds"] == 1 and found["cg_loads"] > 0
