"""triton_tuned's persistent kernel compiled natively for an H200 (sm_90), with
no GPU here: Triton's compiler and ptxas run on the CPU.

The interpreter tests check the arithmetic; this checks what only native
code has. The plain form and the stream-K form fit in shared memory; every
main loop of the stream-K tail is software-pipelined like the rounds' loop
(TMA copies issued ahead, asynchronous ``wgmma``); a cut tile's arrival is
one acquire-release atomic at GPU scope, behind a CTA barrier; the other
piece is read back from L2 (``ld.global.cg``); and the plain form has no
atomics at all.
"""

from __future__ import annotations

import pytest
from gemmreg.testing import native_compile

SCRIPT = """
import json, os, re
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
from gemmreg.testing import compile_natively, ptxas_report
from gemmreg_plugins.triton_tuned import kernels

fn = kernels.persistent_tma_kernel()
out = {}
for form in ("plain", "stream_k"):
    sk = form == "stream_k"
    constexprs = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=16, PROGRAMS=132,
                      A_TRANSPOSED=False, B_TRANSPOSED=False, FLATTEN=True, WS=False,
                      PERSISTENT=True, EPILOGUE_PARTS=1, INPUT_PRECISION="ieee",
                      TF32_SWAP=False, STREAM_K=sk, SK_REVERSED=False)
    types = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[64, 256]>",
             "c_desc": "tensordesc<fp16[128, 256]>", "ws_ptr": "*fp32", "count_ptr": "*i32"}
    if not sk:
        constexprs.update(ws_ptr=None, count_ptr=None)
    compiled = compile_natively(
        fn, types, constexprs,
        aligned=("ws_ptr", "count_ptr") if sk else (),
        num_warps=8, num_stages=3,
    )
    ttgir, ptx = compiled.asm["ttgir"], compiled.asm["ptx"]
    out[form] = {
        "shared": compiled.metadata.shared,
        # a pipelined loop's operand buffers: one allocation of 3 stages per operand
        "staged_buffers": len(re.findall(r"local_alloc : \\(\\) -> !ttg.memdesc<3x", ttgir)),
        "async_dots": ttgir.count("warp_group_dot ") - ttgir.count("isAsync = false"),
        "acq_rel_adds": len(re.findall(r"atom\\.global\\.gpu\\.acq_rel\\.add", ptx)),
        "atomics": len(re.findall(r"\\batom\\.", ptx)),
        "cg_loads": len(re.findall(r"ld\\.global\\.cg", ptx)),
        "barriers": len(re.findall(r"bar\\.sync", ptx)),
        "serialized": ptxas_report(ptx)["serialized"],
    }
print(json.dumps(out))
"""

SHARED_MEMORY = 227 * 1024
"""An H200 block's shared memory (232448 bytes)."""
TAIL_PIECES = 3
"""``stream_k_tail`` unrolls three pieces (a range touches three tiles at most)."""


@pytest.fixture(scope="module")
def compiled() -> dict:
    return native_compile(SCRIPT)


@pytest.mark.parametrize("form", ["plain", "stream_k"])
def test_both_forms_fit_in_shared_memory(compiled, form):
    assert 0 < compiled[form]["shared"] <= SHARED_MEMORY


def test_every_loop_of_the_tail_is_pipelined_like_the_rounds(compiled):
    plain, sk = compiled["plain"], compiled["stream_k"]
    assert plain["staged_buffers"] >= 2  # the rounds' loop: A's, B's (and their barriers') stages
    # ... and the same again for each of the tail's unrolled pieces
    assert sk["staged_buffers"] == plain["staged_buffers"] * (1 + TAIL_PIECES)
    assert sk["async_dots"] >= (1 + TAIL_PIECES) * max(1, plain["async_dots"])


def test_a_cut_tile_hands_over_through_one_acq_rel_atomic_and_l2(compiled):
    sk = compiled["stream_k"]
    assert sk["acq_rel_adds"] == TAIL_PIECES  # one per piece that may be cut
    assert sk["barriers"] >= 2 * TAIL_PIECES  # before the count, and before the reads
    assert sk["cg_loads"] > 0


def test_ptxas_keeps_every_wgmma_of_both_forms_pipelined(compiled):
    assert not compiled["plain"]["serialized"] and not compiled["stream_k"]["serialized"]


def test_the_plain_form_has_no_atomics(compiled):
    assert compiled["plain"]["atomics"] == 0
    assert compiled["plain"]["cg_loads"] == 0
