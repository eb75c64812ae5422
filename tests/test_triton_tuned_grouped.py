"""triton_tuned's grouped path (an MoE layer's experts in one launch) on the
CPU: the tile table covers every member's rows once and nothing else, the
config follows the members' rows, the kernel passes the whole grouped matrix
under the interpreter in every layout, and it compiles natively for an H200
(sm_90) in every config the rule can choose: pipelined within shared
memory, on ``wgmma``, nothing spilled."""

from __future__ import annotations

import gemmreg
import pytest
from gemmreg.checking import matrix
from gemmreg.checking.output_check import check_case
from gemmreg.testing import native_compile
from gemmreg_plugins import triton_tuned
from gemmreg_plugins.triton_tuned import grouped
from gemmreg_plugins.triton_tuned.grouped_kernel import TABLE_FIELDS

SPEC = gemmreg.KernelSpec(
    name="triton_tuned",
    summary="the grouped path under the interpreter",
    prepare=triton_tuned.prepare,
    capabilities=triton_tuned.capabilities_for("cpu"),
    tolerances=triton_tuned.tolerances_for("cpu"),
)
ROUTED = (0, 17, 300, 1024, 2048, 4096, 512, 195)
"""Uneven routing of 4096 tokens to 2 of 8 experts (examples/shapes/moe-experts.yaml)."""


@pytest.mark.parametrize("groups", [(0, 1, 17, 0, 33), (65, 0, 130, 1, 64), ROUTED, (1,)])
@pytest.mark.parametrize("block_m", [16, 64, 128])
def test_the_tile_table_covers_every_members_rows_once_and_no_others(groups, block_m):
    flat = grouped.tile_table(groups, block_m)
    entries = [flat[i : i + TABLE_FIELDS] for i in range(0, len(flat), TABLE_FIELDS)]
    covered: list[int] = []
    start = 0
    for member, size in enumerate(groups):
        mine = [(first, stop) for m, first, stop in entries if m == member]
        assert len(mine) == -(-size // block_m)  # an empty member has no tile
        for first, stop in mine:
            assert stop == start + size  # the mask stops at the member's own last row
            covered += range(first, min(first + block_m, stop))
        start += size
    assert covered == list(range(sum(groups)))


def test_the_config_follows_the_members_rows_the_dtype_and_the_form():
    decode = grouped.config_for((0, 1, 3, 0, 9, 2, 12, 5), 14336, "bf16", tma=True)
    assert decode.name == "64x256x64-w4-s4-tma"  # one warpgroup, 256 columns
    pointer_decode = grouped.config_for((0, 1, 3, 0, 9, 2, 12, 5), 14336, "bf16")
    assert (pointer_decode.block_m, pointer_decode.block_n) == (16, 256)
    assert grouped.config_for((0, 1, 3), 128, "bf16", tma=True).block_n == 64  # narrow N
    assert grouped.config_for((40, 0, 50), 4096, "fp16").block_m == 64
    prefill = grouped.config_for(ROUTED, 14336, "bf16", tma=True)
    assert prefill.name == "128x256x64-w8-s4-tma-shared-split2"
    assert (
        grouped.config_for(ROUTED, 128, "bf16", tma=True).block_n == 128
    )  # no 256-wide tile of 128 columns
    assert grouped.config_for((40, 0, 50), 4096, "fp16", tma=True).name == "64x128x64-w4-s4-tma"
    pointer = grouped.config_for(ROUTED, 14336, "bf16")  # where TMA cannot run
    assert pointer.name == "128x128x64-w4-s4"
    tf32 = grouped.config_for(ROUTED, 14336, "fp32", tma=True)
    assert (tf32.block_n, tf32.block_k, tf32.tma) == (128, 32, False)
    rocm = grouped.config_for(ROUTED, 14336, "bf16", "rocm")
    assert (rocm.block_m, rocm.block_n, rocm.block_k, rocm.num_stages) == (128, 128, 32, 2)


def test_the_kernel_passes_the_grouped_matrix_in_every_layout_under_the_interpreter():
    cases = matrix.build("full", False, ["fp32", "fp16"], batches=(), grouped=True)
    assert {c.problem.layout for c in cases} == set(gemmreg.LAYOUTS)
    failed = [
        (c.problem.label, r.reason)
        for c in cases
        for r in [check_case(SPEC, c.problem, c.seed, "normal")]
        if not r.passed
    ]
    assert not failed, failed


SCRIPT = """
import json, re
import gemmreg
import os
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
from gemmreg.testing import compile_natively, ptxas_report
from gemmreg_plugins.triton_tuned import grouped, grouped_kernel

fn = grouped_kernel.grouped_kernel()
shapes = [((0, 1, 3, 0, 9, 2, 12, 5), 14336), ((40, 0, 50), 4096), ((20, 30), 4096),
          ((0, 17, 300, 1024, 2048, 4096, 512, 195), 14336), ((3000, 2000), 128)]
# the strides of 1 the JIT specialises at launch: A row-major, B row-major or a
# transposed view of row-major weights (an expert's linear layer), C row-major
unit = {"rowmajor": ("stride_ak", "stride_bn", "stride_cn"),
        "transposedB": ("stride_ak", "stride_bk", "stride_cn")}
out = {}
for dtype, element, size in (("bf16", "*bf16", 2), ("fp16", "*fp16", 2), ("fp32", "*fp32", 4)):
    for groups, n in shapes:
        for layout, ones in unit.items():
            c = grouped.config_for(groups, n, dtype)
            constexprs = dict(BLOCK_M=c.block_m, BLOCK_N=c.block_n, BLOCK_K=c.block_k,
                              GROUP_M=c.group_m,
                              INPUT_PRECISION="tf32" if dtype == "fp32" else "ieee")
            constexprs.update({name: 1 for name in ones})
            types = {"a_ptr": element, "b_ptr": element, "c_ptr": element, "table_ptr": "*i32"}
            compiled = compile_natively(
                fn, types, constexprs,
                aligned=[n for n in fn.arg_names if n != "entries"],
                num_warps=c.num_warps, num_stages=c.num_stages,
            )
            ptx = compiled.asm["ptx"]
            name = f"{dtype} {layout} {c.block_m}x{c.block_n}x{c.block_k}-w{c.num_warps}-s{c.num_stages}"
            out[name] = {
                "shared": compiled.metadata.shared,
                "stage": (c.block_m + c.block_n) * c.block_k * size,
                "stages": c.num_stages,
                "block_m": c.block_m,
                "wgmma": len(re.findall(r"wgmma\\.mma_async", ptx)),
                "mma": len(re.findall(r"\\bmma\\.sync", ptx)),
                "copies": len(re.findall(r"cp\\.async\\.c[ga]\\.shared\\.global", ptx)),
                "local": len(re.findall(r"\\bst\\.local|\\bld\\.local", ptx)),
                "serialized": ptxas_report(ptx)["serialized"],
            }
print(json.dumps(out))
"""

SHARED_MEMORY = 227 * 1024
"""An H200 block's shared memory (232448 bytes)."""


@pytest.mark.slow
def test_every_config_the_rule_chooses_compiles_for_an_h200_pipelined_on_wgmma():
    """Each config fits in shared memory with its operand ring of ``stages - 1``
    tiles or more (the K loop pipelined through ``cp.async``, as the tiled
    path's is), multiplies on the tensor cores (``wgmma`` from 64 rows up) and spills nothing."""
    compiled = native_compile(SCRIPT)
    assert len(compiled) >= 18, compiled
    for name, found in compiled.items():
        assert (found["stages"] - 1) * found["stage"] <= found["shared"], (name, found)
        assert found["shared"] <= SHARED_MEMORY, (name, found)
        assert found["copies"] > 0, (name, found)
        # wgmma takes 64 rows a warpgroup: a 16- or 32-row tile runs on mma.sync
        tensor_cores = found["wgmma"] if found["block_m"] >= 64 else found["mma"]
        assert tensor_cores > 0, (name, found)
        assert found["local"] == 0, (name, found)  # no accumulator spilled
        assert not found["serialized"], name  # ptxas kept every wgmma pipelined


def test_the_config_probe_lists_its_points_and_refuses_to_time_without_a_gpu():
    """scripts/probes/fp8_grouped_configs.py, the probe the fp8 and grouped
    rules are to be set from: it reads the example files, and on the CPU
    times nothing (exit 2, one line)."""
    import subprocess
    import sys
    from pathlib import Path

    probe = Path(__file__).resolve().parents[1] / "scripts/probes/fp8_grouped_configs.py"
    listed = subprocess.run([sys.executable, probe, "--dry-run"], capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert "fp8: 22 points" in listed.stdout and "grouped: 4 points" in listed.stdout
    refused = subprocess.run([sys.executable, probe], capture_output=True, text=True)
    assert refused.returncode == 2 and "none here" in refused.stderr
