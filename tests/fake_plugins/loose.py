"""A correct kernel held to a loose tolerance it explains: it rounds A and B to
bf16 before an fp32 product, so its error is far above fp32's usual bound and
far below the one it declares."""

import gemmreg
import torch

from fake_plugins import fp32_spec

WHY = "A and B rounded to bf16 (8-bit mantissa) before an fp32 product"


def launch(a, b, out):
    out.copy_(torch.mm(a.bfloat16().float(), b.bfloat16().float()))


def prepare(problem):
    SPEC.capabilities.require(problem)  # refuses what it does not declare
    return launch


SPEC = fp32_spec(
    "fake_loose",
    launch,
    prepare=prepare,
    tolerances={"fp32": gemmreg.Tolerance(rtol=2e-2, why=WHY)},
)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(SPEC)
