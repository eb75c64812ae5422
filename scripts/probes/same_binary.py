"""Run on any machine, with Triton 3.6.0 ahead of the project's own (below): prints same-binary.txt.

Compile every persistent candidate of ``triton_tuned`` (fp16, 4096^3: its
list ``CUDA_PERSISTENT_TMA``) for an H200 (sm_90) with no GPU here, and
group them by the SHA-256 of the cubin: candidates in one group are one
binary, whatever their configs say. Triton's compiler and ptxas run on the
CPU, as in ``tests/test_triton_tuned_native.py``. Run with the Triton the
H200 ran (3.6.0) ahead of the project's own:

    python3 -m venv /tmp/t36 && /tmp/t36/bin/pip install triton==3.6.0
    PYTHONPATH=$(/tmp/t36/bin/python -c 'import site; print(site.getsitepackages()[0])') \\
        .venv/bin/python scripts/probes/same_binary.py
"""

import hashlib
import os

import gemmreg  # noqa: F401  (decides the backend; with no GPU it turns the interpreter on)

os.environ.pop("TRITON_INTERPRET", None)  # native kernels from here on
import triton  # noqa: E402
from gemmreg_plugins.triton_tuned import configs, kernels, launchers, stream_k  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

M = N = K = 4096
SMS = 132
fn = kernels.persistent_tma_kernel()
groups: dict[str, list[str]] = {}
for config in configs.CUDA_PERSISTENT_TMA:
    bm, bn, bk = config.block_m, config.block_n, config.block_k
    tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
    if not config.persistent:
        programs = tiles
    elif config.stream_k:
        programs = min(tiles, SMS)
    else:
        programs = launchers.persistent_programs(tiles, SMS)
    step = programs if config.persistent and tiles > SMS else SMS
    sk = config.stream_k and stream_k.tail_tiles(tiles, programs) > 0
    constexprs = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=config.group_m, PROGRAMS=step,
                      A_TRANSPOSED=False, B_TRANSPOSED=False, FLATTEN=config.flatten,
                      WS=config.ws, PERSISTENT=config.persistent,
                      EPILOGUE_PARTS=config.epilogue_parts, INPUT_PRECISION="ieee",
                      TF32_SWAP=False, STREAM_K=sk, SK_REVERSED=False)  # fmt: skip
    types = {
        "a_desc": f"tensordesc<fp16[{bm}, {bk}]>",
        "b_desc": f"tensordesc<fp16[{bk}, {bn}]>",
        "c_desc": f"tensordesc<fp16[{bm}, {bn // config.epilogue_parts}]>",
        "ws_ptr": "*fp32",
        "count_ptr": "*i32",
    }
    if not sk:
        constexprs.update(ws_ptr=None, count_ptr=None)
    signature = {
        name: types.get(name, "constexpr" if name in constexprs else "i32")
        for name in fn.arg_names
    }
    aligned = {
        (i,): [["tt.divisibility", 16]]
        for i, name in enumerate(fn.arg_names)
        if sk and name in ("ws_ptr", "count_ptr")
    }
    compiled = triton.compile(
        ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=aligned),
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": config.num_warps, "num_stages": config.num_stages},
    )
    digest = hashlib.sha256(compiled.asm["cubin"]).hexdigest()[:16]
    groups.setdefault(digest, []).append(config.name)
print(f"Triton {triton.__version__}, sm_90, fp16 {M}x{N}x{K}: "
      f"{len(configs.CUDA_PERSISTENT_TMA)} candidates, {len(groups)} binaries")
for digest, names in groups.items():
    print(f"  {digest}  {', '.join(names)}")
