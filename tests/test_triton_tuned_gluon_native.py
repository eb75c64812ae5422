"""What triton_tuned's Gluon kernel (``gluon_ws``) compiles to for an H200
(sm_90), with no GPU here: Triton's compiler, ptxas and cuobjdump run on the
CPU. Every config of both Gluon lists, in fp16 and bf16, with B row-major and
with B a transposed view of a row-major weight (``B_TRANSPOSED``), each
compiled with the descriptor types the launcher's own ``gluon_ws.descriptors``
builds for those operands.

Its arithmetic is checked on the H200 only (Gluon has no interpreter): by the
tuner, on every candidate's first call and on 16 more calls of a winner, and
by ``gemmreg check triton_tuned --full`` with ``GEMMREG_TRITON_TUNED_PATH=gluon_ws``.
"""

from __future__ import annotations

import pytest
from gemmreg.testing import native_compile
from gemmreg_plugins.triton_tuned import configs, paths_here
from gluon_census import CENSUS

CONFIGS = list(configs.CUDA_GLUON_WS) + list(configs.CUDA_GLUON_WS_128X128)
SHARED_MEMORY = 227 * 1024
"""An H200 SM's shared memory for one CTA."""

SCRIPT = (
    CENSUS
    + """
import json, os
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
import torch
from gemmreg.testing import compile_natively
from gemmreg_plugins.triton_tuned import configs, gluon_ws

m, n, k = 1024, 2048, 1024
out = {}
for config in configs.CUDA_GLUON_WS + configs.CUDA_GLUON_WS_128X128:
    for dt, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
        for b_t in (False, True):
            a = torch.empty(m, k, dtype=dtype)
            b = torch.empty(n, k, dtype=dtype).T if b_t else torch.empty(k, n, dtype=dtype)
            c = torch.empty(m, n, dtype=dtype)
            descs = gluon_ws.descriptors(a, b, c, config.block_m, config.block_n,
                                         config.block_k, b_t)
            types = {
                name: f"tensordesc<{dt}[{d.block_shape[0]}, {d.block_shape[1]}],{d.layout!r}>"
                for name, d in zip(("a_desc", "b_desc", "c_desc"), descs)
            }
            constexprs = dict(GROUP_M=config.group_m, PROGRAMS=132, STAGES=config.num_stages,
                              B_TRANSPOSED=b_t)
            compiled = compile_natively(gluon_ws.gemm_gluon_ws, types, constexprs,
                                        aligned=("m", "n", "k"), num_warps=config.num_warps)
            out[f"{config.name} {dt} {'b_t' if b_t else 'b'}"] = {
                "b_box": list(descs[1].block_shape), **census(compiled)
            }
out["regs"] = [gluon_ws.LOADER_REGS.value, gluon_ws.CONSUMER_REGS.value]
print(json.dumps(out))
"""
)


@pytest.fixture(scope="module")
def compiled() -> dict:
    if paths_here.triton_version() < paths_here.GLUON_TRITON:
        pytest.skip(f"the Gluon path is written for Triton >= {paths_here.GLUON_TRITON}")
    return native_compile(SCRIPT)


def test_every_gluon_form_compiles_to_three_warpgroups_that_fit(compiled):
    loader, consumer = compiled["regs"]
    forms = {name: found for name, found in compiled.items() if name != "regs"}
    assert len(forms) == 2 * 2 * len(CONFIGS)
    for name, found in forms.items():
        assert found["warps"] == 12, name  # two consumer warpgroups and the loader's
        assert 0 < found["shared"] <= SHARED_MEMORY, name
        # Registers move from the loader to the consumers.
        assert ["dec", str(loader)] in found["setmaxnreg"], name
        assert ["inc", str(consumer)] in found["setmaxnreg"], name  # JSON: lists
        assert found["tma_loads"] > 0 and found["tma_stores"] > 0, name
        # Nothing spilled: no accumulator in local memory, no stack.
        assert found["local"] == found["stack"] == found["local_bytes"] == 0, name
        assert not found["serialized"], name  # ptxas kept every wgmma pipelined


def test_wgmma_reads_b_k_major_from_the_weights_boxes_and_n_major_otherwise(compiled):
    """PTX's wgmma ends in scale-d, scale-a, scale-b, trans-a, trans-b: a
    transposed B is read as it lies in shared memory (trans-b 0, K-major),
    a row-major one transposed by the instruction (trans-b 1); A is K-major."""
    for config in CONFIGS:
        for dt, ptx_type in (("fp16", "f16"), ("bf16", "bf16")):
            row_major = compiled[f"{config.name} {dt} b"]
            weight = compiled[f"{config.name} {dt} b_t"]
            shape = f"m64n{config.block_n}k16"
            assert [w[:2] for w in row_major["wgmma"]] == [[shape, ptx_type]], config.name
            assert {tuple(w[4:]) for w in row_major["wgmma"]} == {("0", "1")}, config.name
            assert {tuple(w[4:]) for w in weight["wgmma"]} == {("0", "0")}, config.name
            assert [w[:2] for w in weight["wgmma"]] == [[shape, ptx_type]], config.name
            # B's box: BLOCK_K x BLOCK_N of B, or BLOCK_N x BLOCK_K of the weight.
            assert row_major["b_box"] == [config.block_k, config.block_n]
            assert weight["b_box"] == [config.block_n, config.block_k]
            # No pass through registers: the same shared-memory traffic
            # outside TMA and wgmma (the epilogue's), no ldmatrix.
            for key in ("shared_loads", "shared_stores", "shared"):
                assert weight[key] == row_major[key], (config.name, dt, key)
