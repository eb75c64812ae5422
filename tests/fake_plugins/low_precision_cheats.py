"""Low-precision kernels with hidden bugs that pass a careless check: each
computes the GEMM, but not the one the problem asks for. ``gemmreg check``
must FAIL every one (tests/test_low_precision_check.py).

- fake_fp8_no_scales: multiplies the fp8 operands and drops both scales.
- fake_fp8_row_as_column: scales column j of C by A's row scale j (and B's
  column scale rightly): right for per-tensor scales, wrong for rowwise.
- fake_int8_via_bf16: int8 through a bf16 GEMM: right for small values, off
  by the rounding of C to bf16 elsewhere, which int8's zero tolerance catches.
- fake_fp8_nan_as_number: decodes e4m3's NaN as 0, as a hand-written
  dequantiser can: right wherever the inputs hold no NaN, so only the
  matrix's ``nan`` cases catch it.
"""

from __future__ import annotations

import gemmreg
import torch

FP8 = {"fp8e4m3": gemmreg.Precision(math="fp8", detail="torch ops on dequantised operands")}
INT8 = {"int8": gemmreg.Precision(math="int8", detail="claims an exact int32 sum")}


def no_scales(a, b, out, scale_a, scale_b):
    out.copy_(a.float() @ b.float())


def row_as_column(a, b, out, scale_a, scale_b):
    n = out.shape[1]
    by_column = scale_a.reshape(-1)[torch.arange(n, device=out.device) % scale_a.numel()]
    out.copy_((a.float() @ b.float()) * by_column.view(1, n) * scale_b)


def nan_as_number(a, b, out, scale_a, scale_b):
    out.copy_((a.float().nan_to_num(0.0) * scale_a) @ (b.float().nan_to_num(0.0) * scale_b))


def int8_via_bf16(a, b, out):
    out.copy_((a.to(torch.bfloat16) @ b.to(torch.bfloat16)).round())


def _spec(name, launch, precision):
    caps = gemmreg.Capabilities(
        precision=precision,
        out_dtypes={"bf16", "fp16", "fp32"},
        scalings={"tensor", "rowwise"},
        backends={"cpu", "cuda"},
        layouts=gemmreg.LAYOUTS,
    )

    def prepare(problem):
        caps.require(problem)  # refuses what it does not declare: its one bug is the math
        return launch

    return gemmreg.KernelSpec(
        name=name,
        summary=f"test kernel {name}",
        prepare=prepare,
        capabilities=caps,
        tolerances=gemmreg.standard_tolerances(precision),
    )


SPECS = (
    _spec("fake_fp8_no_scales", no_scales, FP8),
    _spec("fake_fp8_row_as_column", row_as_column, FP8),
    _spec("fake_int8_via_bf16", int8_via_bf16, INT8),
    _spec("fake_fp8_nan_as_number", nan_as_number, FP8),
)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    for spec in SPECS:
        register(spec)
