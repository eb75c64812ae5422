"""scripts/probes/f16_cluster_kernel.py, the 16-bit Gluon kernel in clusters
of two with A multicast, as it compiles for sm_90 with Triton 3.9 (no GPU
here; ``scripts/probes/f16_cluster.py check`` checks its arithmetic on one,
as it did on an H100).

What the probe's design rests on, read from the PTX, for fp16 and bf16 and
for B row-major and K-major (W of B = W.T): a launch in clusters of two
whose A box is one multicast TMA load and whose B box is each CTA's own;
the follower's stage hand-back as ``red.shared::cluster`` onto the leader's
shared memory (one a consumer, in the loop and after it) and no remote
mbarrier arrival; the leader's polls of its two counters re-reading shared
memory inside their loops; every ``wgmma`` 64 x 128 x 16 from that dtype
into fp32, one left in flight while the next is issued; nothing spilled or
serialised; C in 16-byte stores where the form asks; the ring within an
SM's shared memory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gemmreg.testing import native_compile
from gemmreg_plugins.triton_tuned import paths_here

SHARED_MEMORY = 227 * 1024
PROBES = Path(__file__).resolve().parents[1] / "scripts" / "probes"
CASES = (("fp16", True, 5, False), ("fp16", False, 5, True), ("bf16", True, 6, True),
         ("bf16", False, 4, True))  # fmt: skip
"""(dtype, B K-major, stages, 16-byte store of C): each B layout in each
dtype, and the deepest ring the runner offers."""

SCRIPT = """
import json, os, re, sys
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
import torch
from gemmreg.testing import compile_natively, ptxas_report

sys.path.insert(0, PROBES)
import f16_cluster_kernel as kernel

out = {}
for dtype, kmajor, stages, vector_store in CASES:
    a = torch.empty(2048, 4096, dtype=getattr(torch, {"fp16": "float16", "bf16": "bfloat16"}[dtype]))
    b = torch.empty((1024, 4096) if kmajor else (4096, 1024), dtype=a.dtype)
    descs = kernel.descriptors(a, b, kmajor)
    types = {name: f"tensordesc<{dtype}[{d.block_shape[0]}, {d.block_shape[1]}],{d.layout!r}>"
             for name, d in zip(("a_desc", "b_desc"), descs)}
    constexprs = dict(GROUP_M=8, PROGRAMS=64, STAGES=stages, VECTOR_STORE=vector_store)
    compiled = compile_natively(kernel.gemm_f16_cluster, {**types, "c_ptr": "*" + dtype},
                                constexprs, aligned=("c_ptr", "n", "stride_cm"), num_warps=4,
                                num_ctas=2)
    ptx = compiled.asm["ptx"]
    blocks = re.split(r"^(\\$L__BB\\d+_\\d+):", ptx, flags=re.M)
    polls = [body for label, body in zip(blocks[1::2], blocks[2::2])
             if "nanosleep" in body and re.search(r"bra(?:\\.uni)?\\s+" + re.escape(label) + ";", body)]
    loads = re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.shared::\\w+\\.global\\.mbarrier"
                       r"::complete_tx::bytes(\\.multicast::cluster)?", ptx)
    out[f"{dtype} {'kmajor' if kmajor else 'rowmajor'} s{stages}{' vs' if vector_store else ''}"] = {
        "shared": compiled.metadata.shared,
        "cluster": re.findall(r"\\.reqnctapercluster (\\d+)", ptx),
        "multicast_loads": sum(1 for x in loads if x),
        "own_loads": sum(1 for x in loads if not x),
        "reds": len(re.findall(r"red\\.shared::cluster", ptx)),
        "remote_arrives": len(re.findall(r"mbarrier\\.arrive[\\w:.]*shared::cluster", ptx)),
        "polls_reading_shared": ["ld.shared" in body for body in polls],
        "wgmma": sorted(set(re.findall(r"wgmma\\.mma_async\\.sync\\.aligned\\.(\\w+)\\.f32\\.(\\w+)\\.(\\w+)", ptx))),
        "wgmma_waits": sorted(set(re.findall(r"wgmma\\.wait_group\\.sync\\.aligned (\\d+)", ptx))),
        "wide_stores": len(re.findall(r"st\\.global(?:\\.\\w+)*\\.v4\\.b32", ptx)),
        "ptxas": ptxas_report(ptx),
    }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def compiled() -> dict:
    if paths_here.triton_version() < (3, 9):
        pytest.skip("the cluster probe is written for Triton 3.9's Gluon")
    script = SCRIPT.replace("PROBES", repr(str(PROBES))).replace("CASES", repr(CASES))
    return native_compile(script)


@pytest.mark.slow
def test_the_16_bit_cluster_kernel_multicasts_a_and_hands_stages_back_by_counting(compiled):
    assert len(compiled) == len(CASES)
    for name, found in compiled.items():
        ptx_type = {"fp16": "f16", "bf16": "bf16"}[name.split()[0]]
        assert found["cluster"] == ["2"], name
        assert found["multicast_loads"] == 1, name  # A, once a K step
        assert found["own_loads"] >= 1, name  # B, each CTA its own
        assert found["reds"] == 4, name  # a consumer: in its K loop and after it
        assert found["remote_arrives"] == 0, name
        assert found["polls_reading_shared"] == [True] * 4, name  # a counter, in and after the loop
        assert found["wgmma"] == [["m64n128k16", ptx_type, ptx_type]], name
        assert found["wgmma_waits"] == ["0", "1"], name
        assert (found["wide_stores"] > 0) == name.endswith(" vs"), name  # 16 bytes a thread
        assert 0 < found["shared"] <= SHARED_MEMORY, name
        assert not found["ptxas"]["serialized"], name
        assert found["ptxas"]["spill_bytes"] == 0, name
