"""What triton_tuned's fp8 Gluon kernel (:mod:`.fp8_gluon`) compiles to for
an H200 (sm_90), with no GPU here: Triton's compiler, ptxas and cuobjdump run
on the CPU, for the rule's config and C in each output dtype.

The test that matters most is ptxas's own report: when anything but a
``wgmma`` writes a ``wgmma``'s accumulator registers inside the pipeline
(moves that swap the two partial sums every K step, say), ptxas serialises
every ``wgmma`` and says so (C7515), and the kernel falls well behind
``torch._scaled_mm``, as that form of it did on the H200.

Its arithmetic is checked on the H200 only (Gluon has no interpreter):
``gemmreg check triton_tuned torch_ref_fp8 --dtype fp8e4m3``.
"""

from __future__ import annotations

import pytest
from gemmreg.testing import native_compile
from gemmreg_plugins.triton_tuned import paths_here

SHARED_MEMORY = 227 * 1024
"""An H200 SM's shared memory for one CTA."""

SCRIPT = """
import json, os, re, subprocess, tempfile
from pathlib import Path
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
import torch
import triton
from gemmreg.testing import compile_natively, ptxas_report
from gemmreg_plugins.triton_tuned import fp8, fp8_gluon

tools = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
config = fp8.config_for(8192, 8192, gluon=True)
m, n, k = 1024, 2048, 1024
names = {torch.float8_e4m3fn: "fp8e4nv", torch.bfloat16: "bf16", torch.float16: "fp16",
         torch.float32: "fp32"}
out = {}
for c_dtype in (torch.bfloat16, torch.float16, torch.float32):
    a = torch.empty(m, k, dtype=torch.float8_e4m3fn)
    b = torch.empty(n, k, dtype=torch.float8_e4m3fn).T
    c = torch.empty(m, n, dtype=c_dtype)
    descs = fp8_gluon.descriptors(a, b, c, config.block_m, config.block_n, config.block_k)
    types = {
        name: f"tensordesc<{names[t.dtype]}[{d.block_shape[0]}, {d.block_shape[1]}],{d.layout!r}>"
        for name, d, t in zip(("a_desc", "b_desc", "c_desc"), descs, (a, b, c))
    }
    constexprs = dict(GROUP_M=config.group_m, PROGRAMS=132, STAGES=config.num_stages)
    compiled = compile_natively(
        fp8_gluon.gemm_fp8_gluon, {**types, "sa_ptr": "*fp32", "sb_ptr": "*fp32"}, constexprs,
        aligned=("sa_ptr", "sb_ptr", "m", "n", "k"), num_warps=4,
    )
    ptx = compiled.asm["ptx"]
    cubin = Path(tempfile.mkdtemp()) / "k.cubin"
    cubin.write_bytes(compiled.asm["cubin"])
    usage = subprocess.run([str(tools / "cuobjdump"), "--dump-resource-usage", str(cubin)],
                           capture_output=True, text=True, check=True).stdout
    out[str(c_dtype)] = {
        "shared": compiled.metadata.shared,
        "warps": compiled.metadata.num_warps,
        "wgmma": sorted(set(re.findall(
            r"wgmma\\.mma_async\\.sync\\.aligned\\.(\\w+)\\.f32\\.(\\w+)\\.(\\w+)", ptx))),
        "waits": sorted(set(re.findall(r"wgmma\\.wait_group\\.sync\\.aligned\\s+(\\d+)", ptx))),
        "ptxas": ptxas_report(ptx),
        "local": len(re.findall(r"\\bst\\.local|\\bld\\.local", ptx)),
        "stack": int(re.search(r"STACK:(\\d+)", usage).group(1)),
    }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def compiled() -> dict:
    if paths_here.triton_version() < paths_here.GLUON_TRITON:
        pytest.skip(f"the Gluon kernels are written for Triton >= {paths_here.GLUON_TRITON}")
    return native_compile(SCRIPT)


def test_each_output_dtype_compiles_to_three_warpgroups_that_fit(compiled):
    assert set(compiled) == {"torch.bfloat16", "torch.float16", "torch.float32"}
    for c_dtype, found in compiled.items():
        assert found["warps"] == 12, c_dtype  # two consumer warpgroups and the loader's
        assert 0 < found["shared"] <= SHARED_MEMORY, (c_dtype, found["shared"])
        assert found["local"] == found["stack"] == 0, c_dtype  # nothing spilled


def test_the_partial_sums_are_made_on_fp8_wgmma_and_promoted_one_step_behind(compiled):
    """Each K step's wgmma (e4m3 x e4m3 into fp32, 64 x 128 x 32) is waited for
    with one group left in flight, the next step's, while its partial sum is
    added into the accumulator; ptxas keeps them pipelined (no C7515)."""
    for c_dtype, found in compiled.items():
        assert found["wgmma"] == [["m64n128k32", "e4m3", "e4m3"]], c_dtype
        assert "1" in found["waits"], c_dtype
        assert not any("C7515" in line for line in found["ptxas"]["performance"]), found
        assert not found["ptxas"]["serialized"], (c_dtype, found["ptxas"])
