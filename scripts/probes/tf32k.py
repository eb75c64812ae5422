"""Imported by tf32_races.py (beside it); not run on its own.

Probe kernel: TF32 GEMM as C^T = B^T A^T, B^T in registers, A in SUB_M row blocks
(each its own wgmma with the same register operand).
"""
import triton
import triton.language as tl


@triton.jit
def gemm_tf32_swapped(a_desc, b_desc, c_desc, m, n, k,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, SUB_M: tl.constexpr,
                      PERSISTENT: tl.constexpr, EPILOGUE_PARTS: tl.constexpr, MASK: tl.constexpr, BARRIER: tl.constexpr):
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(m, BLOCK_M)
    tiles_n = tl.cdiv(n, BLOCK_N)
    k_tiles = tl.cdiv(k, BLOCK_K)
    num_tiles = tiles_m * tiles_n
    tiles_per_group = GROUP_M * tiles_n
    step: tl.constexpr = NUM_SMS if PERSISTENT else 1
    end = num_tiles if PERSISTENT else pid + 1
    SUB: tl.constexpr = BLOCK_M // SUB_M
    for tile in tl.range(pid, end, step):
        first_m = (tile // tiles_per_group) * GROUP_M
        group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
        off_m = (first_m + (tile % tiles_per_group) % group_rows) * BLOCK_M
        off_n = ((tile % tiles_per_group) // group_rows) * BLOCK_N
        acc0 = tl.zeros((BLOCK_N, SUB), dtype=tl.float32)
        acc1 = tl.zeros((BLOCK_N, SUB), dtype=tl.float32)
        for kk in range(k_tiles):
            off_k = kk * BLOCK_K
            b = b_desc.load([off_k, off_n])
            if MASK:
                b = (b.to(tl.uint32, bitcast=True) & 0xFFFFE000).to(tl.float32, bitcast=True)
            else:
                b = tl.inline_asm_elementwise("cvt.rna.tf32.f32 $0, $1;", "=r,r", [b], dtype=tl.float32, is_pure=True, pack=1)
            bt = b.T
            if BARRIER:
                tl.debug_barrier()
            a0 = a_desc.load([off_m, off_k])
            acc0 = tl.dot(bt, a0.T, acc0, input_precision="tf32")
            if SUB_M == 2:
                a1 = a_desc.load([off_m + SUB, off_k])
                acc1 = tl.dot(bt, a1.T, acc1, input_precision="tf32")
        _store(c_desc, acc0.T, off_m, off_n, BLOCK_N, EPILOGUE_PARTS)
        if SUB_M == 2:
            _store(c_desc, acc1.T, off_m + SUB, off_n, BLOCK_N, EPILOGUE_PARTS)


@triton.jit
def _store(c_desc, acc, off_m, off_n, BLOCK_N: tl.constexpr, PARTS: tl.constexpr):
    if PARTS == 1:
        c_desc.store([off_m, off_n], acc)
    else:
        half: tl.constexpr = BLOCK_N // 2
        rows: tl.constexpr = acc.shape[0]
        left, right = tl.split(tl.permute(tl.reshape(acc, (rows, 2, half)), (0, 2, 1)))
        c_desc.store([off_m, off_n], left)
        c_desc.store([off_m, off_n + half], right)


def launch(a, b, c, bm, bn, bk, sub_m, stages, warps, persistent=True, parts=1, mask=True, group_m=8, sms=132, barrier=False):
    from triton.tools.tensor_descriptor import TensorDescriptor
    m, k = a.shape
    n = b.shape[1]
    sub = bm // sub_m
    a_desc = TensorDescriptor.from_tensor(a, [sub, bk])
    b_desc = TensorDescriptor.from_tensor(b, [bk, bn])
    c_desc = TensorDescriptor.from_tensor(c, [sub, bn // parts])
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    grid = (min(sms, tiles) if persistent else tiles,)
    gemm_tf32_swapped[grid](a_desc, b_desc, c_desc, m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m,
                            NUM_SMS=sms, SUB_M=sub_m, PERSISTENT=persistent, EPILOGUE_PARTS=parts, MASK=mask, BARRIER=barrier,
                            num_warps=warps, num_stages=stages)
