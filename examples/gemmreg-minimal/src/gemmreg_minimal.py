"""A whole gemmreg plugin: a masked Triton GEMM, int64 offsets, fp32 accumulator."""

import functools

import gemmreg

TILE = 64  # each program computes a TILE x TILE block of C, TILE of K at a time


@functools.cache
def kernel():  # built on first use: gemmreg decides on Triton's interpreter before triton loads
    import triton
    import triton.language as tl

    @triton.jit
    def matmul(a, b, c, m, n, k, sam, sak, sbk, sbn, scm, scn, BLOCK: tl.constexpr):
        rm = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)[:, None]
        rn = (tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)[None, :]
        acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
        for k0 in range(0, k, BLOCK):
            rk = k0 + tl.arange(0, BLOCK).to(tl.int64)
            ka, kb = rk[None, :], rk[:, None]  # K along A's rows, down B's columns
            x = tl.load(a + rm * sam + ka * sak, mask=(rm < m) & (ka < k), other=0)
            y = tl.load(b + kb * sbk + rn * sbn, mask=(kb < k) & (rn < n), other=0)
            acc += tl.dot(x, y, input_precision="ieee")  # fp32: IEEE, not NVIDIA's default TF32
        tl.store(c + rm * scm + rn * scn, acc.to(c.dtype.element_ty), mask=(rm < m) & (rn < n))

    return matmul


def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
    SPEC.capabilities.require(problem)  # refuse, with the reason, what is not declared
    matmul, m, n, k = kernel(), problem.m, problem.n, problem.k
    grid = (-(-m // TILE), -(-n // TILE))

    def launch(a, b, c):  # enqueue c = a @ b: no allocation, no sync
        matmul[grid](a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride(), BLOCK=TILE)

    return launch


SPEC = gemmreg.KernelSpec(
    name="minimal_triton",
    summary="masked Triton GEMM, 64x64 tiles, fp32 accumulator",
    prepare=prepare,
    capabilities=gemmreg.Capabilities(
        dtypes={"fp32", "fp16"},
        backends=gemmreg.BACKENDS,  # CUDA, ROCm, and the CPU under Triton's interpreter
        layouts=gemmreg.LAYOUTS,  # strides, not shapes, address A, B and C
        precision={
            "fp32": gemmreg.Precision(math="ieee_fp32", detail="tl.dot input_precision='ieee'"),
            "fp16": gemmreg.Precision(math="fp16", detail="tl.dot, fp32 accumulator"),
        },
        triton=True,  # gemmreg applies Triton's known limits (bf16 under its interpreter)
    ),
    tolerances={
        "fp32": gemmreg.Tolerance(rtol=3e-5, atol=1e-6),
        "fp16": gemmreg.Tolerance(rtol=2e-3, atol=1e-3),
    },
    sources=(__file__,),
)
