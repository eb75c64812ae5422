"""Broken kernels written with torch ops: fast on the CPU, and able to run
what Triton's interpreter cannot (bf16, fp8, int8, batched and grouped).

Each carries one bug a kernel author could ship, in a path only some
problems take (tests/test_torch_mutants.py shows which case catches it):
  gemv_weight_layout  M == 1 goes to a GEMV that reads B as an nn.Linear
                      weight (N x K): right wherever K or N is 1
  split_k_drops_tail  deep K is split in four, each split K // 4 deep: the
                      last K % 4 products are never summed
  acc_in_input_dtype  fp16/bf16 summed in a 16-bit accumulator
  tf32_undeclared     fp32 inputs rounded to TF32, IEEE fp32 declared
  writes_past_end     C right, and one element past its end written
  fp8_reciprocal      divides by the scales instead of multiplying
  fp8_rowwise_as_tensor  the first row and column scale used for all
  int8_fp32_acc       int8 summed in fp32: exact only below 2^24
  int8_int16_acc      int8 summed in int16 (wraps)
  batched_pairs       items two at a time: an odd last item never runs
  grouped_one_row_gemv  one-row members through the GEMV above
"""

from __future__ import annotations

import gemmreg
import torch

PLAIN = {
    "fp32": gemmreg.Precision(math="ieee_fp32", detail="torch ops"),
    "fp16": gemmreg.Precision(math="fp16", detail="claims an fp32 accumulator"),
    "bf16": gemmreg.Precision(math="bf16", detail="claims an fp32 accumulator"),
}
HALF = {dtype: PLAIN[dtype] for dtype in ("fp16", "bf16")}
FP8 = {
    dtype: gemmreg.Precision(math="fp8", detail="torch ops on dequantised operands")
    for dtype in ("fp8e4m3", "fp8e5m2")
}
INT8 = {"int8": gemmreg.Precision(math="int8", detail="claims an exact int32 sum")}
SPLIT_K = 4
SPLIT_K_FROM = 1024
"""The split-K path's K: at least this, and at least 4x M and N."""


def _mm(a, b, out):
    """The right product, in fp32 (torch's CPU bf16 GEMM reads the padding)."""
    out.copy_((a.float() @ b.float()).to(out.dtype))


def gemv_weight_layout(a, b, out):
    if a.shape[0] != 1:
        return _mm(a, b, out)
    k, n = b.shape
    weight = torch.as_strided(b, (n, k), (k, 1))  # B's storage, taken as (N, K)
    out.copy_((weight.float() @ a[0].float()).view(1, n).to(out.dtype))


def split_k_drops_tail(a, b, out):
    (m, k), n = a.shape, b.shape[1]
    if k < SPLIT_K_FROM or k < 4 * max(m, n):
        return _mm(a, b, out)
    step = k // SPLIT_K
    splits = [slice(i * step, (i + 1) * step) for i in range(SPLIT_K)]
    out.copy_(sum(a[:, s].float() @ b[s].float() for s in splits).to(out.dtype))


def acc_in_input_dtype(a, b, out):
    """Exact products, each partial sum rounded to C's dtype (``tl.dot(...,
    out_dtype=tl.float16)``, or a 16-bit accumulator)."""
    acc = torch.zeros(out.shape, dtype=out.dtype)
    for kk in range(a.shape[1]):
        acc = (acc.float() + a[:, kk : kk + 1].float() * b[kk : kk + 1].float()).to(out.dtype)
    out.copy_(acc)


def tf32_undeclared(a, b, out):
    if a.dtype != torch.float32:
        return _mm(a, b, out)
    keep = ~((1 << 13) - 1)  # fp32's 23 mantissa bits cut to TF32's 10
    a, b = ((x.contiguous().view(torch.int32) & keep).view(torch.float32) for x in (a, b))
    out.copy_(a @ b)


def writes_past_end(a, b, out):
    _mm(a, b, out)
    torch.as_strided(out, (1,), (1,), out.storage_offset() + out.numel()).fill_(0)


def fp8_reciprocal(a, b, out, scale_a, scale_b):
    out.copy_((a.float() / scale_a) @ (b.float() / scale_b))


def fp8_rowwise_as_tensor(a, b, out, scale_a, scale_b):
    out.copy_((a.float() @ b.float()) * scale_a.reshape(-1)[0] * scale_b.reshape(-1)[0])


def int8_fp32_acc(a, b, out):
    """Tiles of 32 products (exact in fp32), their sums added in fp32."""
    acc = torch.zeros(out.shape, dtype=torch.float32)
    for start in range(0, a.shape[1], 32):
        acc += a[:, start : start + 32].float() @ b[start : start + 32].float()
    out.copy_(acc.to(torch.int32))


def int8_int16_acc(a, b, out):
    acc = torch.zeros(out.shape, dtype=torch.int16)
    for kk in range(a.shape[1]):
        acc += a[:, kk : kk + 1].to(torch.int16) * b[kk : kk + 1].to(torch.int16)
    out.copy_(acc)


def batched_pairs(a, b, out):
    for i in range(0, out.shape[0] - 1, 2):
        out[i : i + 2] = torch.bmm(a[i : i + 2].float(), b[i : i + 2].float()).to(out.dtype)


def grouped_one_row_gemv(a, b, out, offsets):
    starts = offsets.tolist()
    for i in range(len(starts) - 1):
        start, stop = starts[i], starts[i + 1]
        if stop - start == 1:
            gemv_weight_layout(a[start:stop], b[i], out[start:stop])
        elif stop > start:
            _mm(a[start:stop], b[i], out[start:stop])


def _spec(name, launch, precision, form="", **caps):
    """``form``: ``batched`` or ``grouped`` where the bug is in that form's
    launch (its plain problems run right); the other mutants run a batched
    problem right."""
    capabilities = gemmreg.Capabilities(
        precision=precision, backends={"cpu", "cuda"}, layouts=gemmreg.LAYOUTS, **caps
    )

    def bmm(a, b, out):
        out.copy_(torch.bmm(a.float(), b.float()).to(out.dtype))

    def prepare(problem):
        capabilities.require(problem)  # each mutant carries one bug, not two
        if problem.batch > 1:
            return launch if form == "batched" else bmm
        return launch if form in ("", "grouped") else _mm

    return gemmreg.KernelSpec(
        name=name,
        summary=f"mutant: {name}",
        prepare=prepare,
        capabilities=capabilities,
        tolerances=gemmreg.standard_tolerances(precision),
    )


FP8_CAPS = {"out_dtypes": {"bf16", "fp16", "fp32"}, "scalings": {"tensor", "rowwise"}}
SPECS = (
    _spec("tm_gemv_weight_layout", gemv_weight_layout, PLAIN),
    _spec("tm_split_k_drops_tail", split_k_drops_tail, PLAIN),
    _spec("tm_acc_in_input_dtype", acc_in_input_dtype, HALF),
    _spec("tm_tf32_undeclared", tf32_undeclared, PLAIN),
    _spec("tm_writes_past_end", writes_past_end, PLAIN),
    _spec("tm_fp8_reciprocal", fp8_reciprocal, FP8, **FP8_CAPS),
    _spec("tm_fp8_rowwise_as_tensor", fp8_rowwise_as_tensor, FP8, **FP8_CAPS),
    _spec("tm_int8_fp32_acc", int8_fp32_acc, INT8),
    _spec("tm_int8_int16_acc", int8_int16_acc, INT8),
    _spec("tm_batched_pairs", batched_pairs, PLAIN, "batched", batch_layouts={"packed", "strided"}),
    _spec("tm_grouped_one_row_gemv", grouped_one_row_gemv, PLAIN, "grouped", grouped=True),
)
BY_NAME = {spec.name: spec for spec in SPECS}


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    for spec in SPECS:
        register(spec)
