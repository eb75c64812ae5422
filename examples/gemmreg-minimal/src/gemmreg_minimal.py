"""A whole gemmreg plugin: a masked Triton GEMM, int64 offsets, fp32 accumulator."""

import gemmreg
import triton
import triton.language as tl

TILE = 64  # each program computes a TILE x TILE block of C, TILE of K at a time
PRECISION = {"fp32": gemmreg.Precision(math="ieee_fp32"), "fp16": gemmreg.Precision(math="fp16")}


@triton.jit
def matmul(a, b, c, m, n, k, sam, sak, sbk, sbn, scm, scn, BLOCK: tl.constexpr):
    rm = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)[:, None]
    rn = (tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)[None, :]
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(0, k, BLOCK):
        rk = k0 + tl.arange(0, BLOCK).to(tl.int64)
        x = tl.load(a + rm * sam + rk[None, :] * sak, mask=(rm < m) & (rk[None, :] < k), other=0)
        y = tl.load(b + rk[:, None] * sbk + rn * sbn, mask=(rk[:, None] < k) & (rn < n), other=0)
        acc += tl.dot(x, y, input_precision="ieee")  # fp32: IEEE, not NVIDIA's default TF32
    tl.store(c + rm * scm + rn * scn, acc.to(c.dtype.element_ty), mask=(rm < m) & (rn < n))


def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
    SPEC.capabilities.require(problem)  # refuse, with the reason, what is not declared
    grid = (triton.cdiv(problem.m, TILE), triton.cdiv(problem.n, TILE))

    def launch(a, b, c):  # enqueue c = a @ b: no allocation, no sync
        matmul[grid](a, b, c, *problem.mnk, *a.stride(), *b.stride(), *c.stride(), BLOCK=TILE)

    return launch


SPEC = gemmreg.KernelSpec(
    name="minimal_triton",
    summary="masked Triton GEMM, 64x64 tiles, fp32 accumulator",
    prepare=prepare,
    capabilities=gemmreg.Capabilities(precision=PRECISION, layouts=gemmreg.LAYOUTS, triton=True),
    tolerances=gemmreg.standard_tolerances(PRECISION),  # gemmreg's figures for the math declared
)
