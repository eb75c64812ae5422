"""scripts/probes/tf32_cluster_kernel.py, the TF32 Gluon kernel in clusters of
two with A multicast, as it compiles for sm_90 with Triton 3.9 (no GPU here;
its arithmetic was checked on an H100,
``evidence/2026-12-05-h100-triton39-gluon-and-tf32-clusters``).

What the probe's design rests on, read from the PTX: a launch in clusters
of two whose A box is one multicast TMA load; the follower's stage hand-back
as one ``red.shared::cluster`` a consumer onto the leader's shared memory
and no remote mbarrier arrival (Gluon's ``from_cta`` arrival goes the other
way, and the form built on it hung); the leader's poll of its counters
re-reading shared memory inside its loop; every ``wgmma`` TF32, 64 x 256 a
consumer; nothing spilled; within an SM's shared memory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gemmreg.testing import native_compile
from gemmreg_plugins.triton_tuned import paths_here

SHARED_MEMORY = 227 * 1024
PROBES = Path(__file__).resolve().parents[1] / "scripts" / "probes"

SCRIPT = """
import json, os, re, sys
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
import torch
from gemmreg.testing import compile_natively, ptxas_report

sys.path.insert(0, PROBES)
import tf32_cluster_kernel as kernel

out = {}
for vector_store in (False, True):
    a = torch.empty(1024, 1024, dtype=torch.float32)
    b = torch.empty(1024, 2048, dtype=torch.float32)
    descs = kernel.descriptors(a, b, 256, 128, 32)
    types = {name: f"tensordesc<fp32[{d.block_shape[0]}, {d.block_shape[1]}],{d.layout!r}>"
             for name, d in zip(("a_desc", "b_desc"), descs)}
    constexprs = dict(GROUP_M=8, PROGRAMS=66, STAGES=4, VECTOR_STORE=vector_store)
    compiled = compile_natively(kernel.gemm_tf32_cluster, {**types, "c_ptr": "*fp32"}, constexprs,
                                aligned=("c_ptr", "n", "stride_cm"), num_warps=4, num_ctas=2)
    ptx = compiled.asm["ptx"]
    # the leader's poll: a block that sleeps and branches back to its own
    # label, re-reading shared memory each time round
    blocks = re.split(r"^(\\$L__BB\\d+_\\d+):", ptx, flags=re.M)
    polls = [body for label, body in zip(blocks[1::2], blocks[2::2])
             if "nanosleep" in body and re.search(r"bra(?:\\.uni)?\\s+" + re.escape(label) + ";", body)]
    out["vs" if vector_store else "plain"] = {
        "shared": compiled.metadata.shared,
        "cluster": re.findall(r"\\.reqnctapercluster (\\d+)", ptx),
        "multicast_loads": len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.shared::cluster"
                                          r"\\.global\\.mbarrier::complete_tx::bytes\\.multicast", ptx)),
        "reds": len(re.findall(r"red\\.shared::cluster", ptx)),
        "remote_arrives": len(re.findall(r"mbarrier\\.arrive[\\w:.]*shared::cluster", ptx)),
        "polls_reading_shared": ["ld.shared" in body for body in polls],
        "wgmma": sorted(set(re.findall(r"wgmma\\.mma_async\\.sync\\.aligned\\.(\\w+)\\.f32\\.tf32", ptx))),
        "ptxas": ptxas_report(ptx),
    }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def compiled() -> dict:
    if paths_here.triton_version() < (3, 9):
        pytest.skip("the cluster probe is written for Triton 3.9's Gluon")
    return native_compile(SCRIPT.replace("PROBES", repr(str(PROBES))))


@pytest.mark.slow
def test_the_cluster_kernel_multicasts_a_and_hands_stages_back_by_counting(compiled):
    assert set(compiled) == {"plain", "vs"}
    for name, found in compiled.items():
        assert found["cluster"] == ["2"], name
        assert found["multicast_loads"] >= 1, name
        assert found["reds"] == 2, name  # one a consumer
        assert found["remote_arrives"] == 0, name
        assert found["polls_reading_shared"] == [True, True], name  # one loop a counter
        assert found["wgmma"] == ["m64n256k8"], name
        assert 0 < found["shared"] <= SHARED_MEMORY, name
        assert not found["ptxas"]["serialized"], name
        assert found["ptxas"]["spill_bytes"] == 0, name
