"""``gemmreg.testing.ptxas_report``: what ptxas says of a kernel's PTX, read
on a machine without a GPU.

The kernel below multiplies with its first ``wgmma`` operand in registers,
as a TF32 kernel whose B is N-major must. Leaving one group in flight
across each wait lets those registers die while the hardware still reads
them, and ptxas serialises every ``wgmma`` (and says so only in an info
line); waiting for each group whole keeps them pipelined. The report must
tell the two apart.
"""

from __future__ import annotations

import re

import pytest
from gemmreg.testing import native_compile

KERNEL = """
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma, warpgroup_mma_wait


@gluon.jit
def register_operand_products(a_ptr, b_ptr, c_ptr, steps, IN_FLIGHT: gl.constexpr):
    # C (128 x 128) += A (128 x 32, from registers) @ B (32 x 128, K-major in shared memory)
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 128, 8])
    a_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=1)
    plain: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    wide = gl.arange(0, 128, layout=gl.SliceLayout(1, plain))
    deep = gl.arange(0, 32, layout=gl.SliceLayout(0, plain))
    at = wide[:, None] * 32 + deep[None, :]
    box: gl.constexpr = gl.NVMMASharedLayout.get_default_for([128, 32], gl.float32)
    a_s = gl.allocate_shared_memory(gl.float32, [128, 32], box, gl.load(a_ptr + at))
    b_s = gl.allocate_shared_memory(gl.float32, [128, 32], box, gl.load(b_ptr + at))
    acc = gl.zeros([128, 128], gl.float32, acc_layout)
    for i in range(steps):
        a = a_s.load(a_layout)
        acc = warpgroup_mma(a, b_s.permute((1, 0)), acc, is_async=True)
        acc, a = warpgroup_mma_wait(IN_FLIGHT, deps=[acc, a])
    acc = warpgroup_mma_wait(0, deps=[acc])
    rows = gl.arange(0, 128, layout=gl.SliceLayout(1, acc_layout))
    cols = gl.arange(0, 128, layout=gl.SliceLayout(0, acc_layout))
    gl.store(c_ptr + rows[:, None] * 128 + cols[None, :], acc)
"""

SCRIPT = """
import json, os, sys, tempfile
from pathlib import Path
import gemmreg  # decides the backend first, and with no GPU turns the interpreter on
os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
from gemmreg.testing import compile_natively, ptxas_report

folder = tempfile.mkdtemp()  # a jit function's source must be a file's
(Path(folder) / "register_operand.py").write_text(KERNEL)
sys.path.insert(0, folder)
from register_operand import register_operand_products

out = {}
for in_flight in (1, 0):
    pointers = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32"}
    compiled = compile_natively(register_operand_products, pointers, {"IN_FLIGHT": in_flight},
                                num_warps=4)
    out[f"in flight {in_flight}"] = ptxas_report(compiled.asm["ptx"])
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def reports() -> dict:
    hopper = pytest.importorskip("triton.experimental.gluon.language.nvidia.hopper")
    if not hasattr(hopper, "warpgroup_mma"):
        pytest.skip("this Triton's Gluon has no warpgroup_mma for Hopper")
    return native_compile(f"KERNEL = {KERNEL!r}\n" + SCRIPT)


@pytest.mark.slow
def test_the_report_names_wgmma_that_ptxas_serialised(reports):
    left = reports["in flight 1"]
    assert left["serialized"], left
    assert any(line.startswith("(C751") and "serialized" in line for line in left["performance"])
    assert not any(re.search(r"function '|around line", line) for line in left["performance"])


@pytest.mark.slow
def test_a_pipelined_kernel_reports_no_loss_and_its_registers(reports):
    whole = reports["in flight 0"]
    assert whole["performance"] == [] and not whole["serialized"], whole
    assert 128 < whole["registers"] <= 255  # the 128 x 128 fp32 sum alone takes 128
    assert whole["spill_bytes"] == 0
