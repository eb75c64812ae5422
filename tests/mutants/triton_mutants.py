"""The seed Triton kernel with one bug switched in per mutant (BUG is a
constexpr, so each mutant compiles to its own kernel).

bugs:
  k_modulo         K tail wrapped with ``% k`` instead of masked
  store_mask_only  loads unmasked; only the store is masked
  b_stride_k       B's row stride taken as K instead of its real stride
  acc_reset        accumulator zeroed inside the K loop
  tail_unwritten   the store mask drops the last partial tile of rows
  writes_a         the kernel also writes into A
  int32_offsets    offsets multiplied in int32 (wraps past 2^31; GPU only)
plus ``cached``, a launch that returns its first result again on later calls.
"""

from __future__ import annotations

import functools

import gemmreg

BUGS = (
    "k_modulo",
    "store_mask_only",
    "b_stride_k",
    "acc_reset",
    "tail_unwritten",
    "writes_a",
    "int32_offsets",
)
BLOCK = 32


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def mutant_kernel(
        a_ptr,
        b_ptr,
        c_ptr,
        m,
        n,
        k,
        stride_am,
        stride_ak,
        stride_bk,
        stride_bn,
        stride_cm,
        stride_cn,
        BLOCK_SIZE: tl.constexpr,
        BUG: tl.constexpr,
    ):
        programs_n = tl.cdiv(n, BLOCK_SIZE)
        program_m = tl.program_id(0) // programs_n
        program_n = tl.program_id(0) % programs_n
        offsets_m = program_m * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        offsets_n = program_n * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        offsets_k = tl.arange(0, BLOCK_SIZE)
        if BUG != "int32_offsets":
            offsets_m = offsets_m.to(tl.int64)
            offsets_n = offsets_n.to(tl.int64)
            offsets_k = offsets_k.to(tl.int64)
        accumulator = tl.zeros((BLOCK_SIZE, BLOCK_SIZE), dtype=tl.float32)
        for k_block in range(0, tl.cdiv(k, BLOCK_SIZE)):
            if BUG == "acc_reset":
                accumulator = tl.zeros((BLOCK_SIZE, BLOCK_SIZE), dtype=tl.float32)
            current_k = k_block * BLOCK_SIZE + offsets_k
            if BUG == "k_modulo":
                wrapped = current_k % k
                a = tl.load(
                    a_ptr + offsets_m[:, None] * stride_am + wrapped[None, :] * stride_ak,
                    mask=offsets_m[:, None] < m,
                    other=0.0,
                )
                b = tl.load(
                    b_ptr + wrapped[:, None] * stride_bk + offsets_n[None, :] * stride_bn,
                    mask=offsets_n[None, :] < n,
                    other=0.0,
                )
            elif BUG == "store_mask_only":
                a = tl.load(a_ptr + offsets_m[:, None] * stride_am + current_k[None, :] * stride_ak)
                b = tl.load(b_ptr + current_k[:, None] * stride_bk + offsets_n[None, :] * stride_bn)
            else:
                row_stride_b = k if BUG == "b_stride_k" else stride_bk
                a = tl.load(
                    a_ptr + offsets_m[:, None] * stride_am + current_k[None, :] * stride_ak,
                    mask=(offsets_m[:, None] < m) & (current_k[None, :] < k),
                    other=0.0,
                )
                b = tl.load(
                    b_ptr + current_k[:, None] * row_stride_b + offsets_n[None, :] * stride_bn,
                    mask=(current_k[:, None] < k) & (offsets_n[None, :] < n),
                    other=0.0,
                )
                if BUG == "writes_a":
                    tl.store(
                        a_ptr + offsets_m[:, None] * stride_am + current_k[None, :] * stride_ak,
                        a * 2,
                        mask=(offsets_m[:, None] < m) & (current_k[None, :] < k),
                    )
            accumulator += tl.dot(a, b, input_precision="ieee")
        rows_written = (m // BLOCK_SIZE) * BLOCK_SIZE if BUG == "tail_unwritten" else m
        mask = (offsets_m[:, None] < rows_written) & (offsets_n[None, :] < n)
        c = c_ptr + offsets_m[:, None] * stride_cm + offsets_n[None, :] * stride_cn
        tl.store(c, accumulator.to(c_ptr.dtype.element_ty), mask=mask)

    return mutant_kernel


def _launcher(bug: str):
    def launch(a, b, out):
        import triton

        m, k = a.shape
        n = b.shape[1]
        grid = (triton.cdiv(m, BLOCK) * triton.cdiv(n, BLOCK),)
        _kernel()[grid](
            a,
            b,
            out,
            m,
            n,
            k,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            out.stride(0),
            out.stride(1),
            BLOCK_SIZE=BLOCK,
            BUG=bug,
        )

    return launch


def _cached_launcher():
    results = {}
    launch = _launcher("none")

    def cached(a, b, out):
        key = tuple(out.shape)
        if key not in results:
            launch(a, b, out)
            results[key] = out.clone()
        out.copy_(results[key])

    return cached


CAPABILITIES = gemmreg.Capabilities(
    dtypes={"fp32", "fp16"},
    backends={"cpu", "cuda", "rocm"},
    precision={"fp32": gemmreg.Precision(math="ieee_fp32"), "fp16": gemmreg.Precision(math="fp16")},
    layouts={"rowmajor", "transposedA", "transposedB", "padded"},
)


def _spec(name: str, make_launch) -> gemmreg.KernelSpec:
    def prepare(problem):
        CAPABILITIES.require(problem)  # each mutant carries one bug, not two
        return make_launch()

    return gemmreg.KernelSpec(
        name=name,
        summary=f"mutant: {name}",
        prepare=prepare,
        capabilities=CAPABILITIES,
        tolerances={
            "fp32": gemmreg.Tolerance(rtol=3e-5, atol=1e-6),
            "fp16": gemmreg.Tolerance(rtol=2e-3, atol=1e-3),
        },
    )


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    for bug in BUGS:
        register(_spec(f"mutant_{bug}", lambda bug=bug: _launcher(bug)))
    register(_spec("mutant_cached", _cached_launcher))
